// symbolize.h: addresses in the running process, as people read them.
#pragma once
#include <string>

namespace cudashim::symbols {

struct Symbolized {
  std::string module;    // file name of the object (basename), "" when unknown
  std::string path;      // the object's path as the loader has it (whose package it is), "" when unknown
  std::string function;  // demangled symbol name, "" when the object exports none near it
  unsigned long offset = 0;  // from the symbol (or from the module when no symbol)
};

// Describes a return address in this process (dladdr + demangling). Subtracts one
// byte so the address falls inside the calling instruction.
Symbolized symbolize(const void* return_address);

// "module!function+0xoff" or "module+0xoff".
std::string to_string(const Symbolized& s);

// True for frames that belong to CUDA's own libraries or to cudashim (not user code).
bool is_runtime_frame(const Symbolized& s);

}  // namespace cudashim::symbols
