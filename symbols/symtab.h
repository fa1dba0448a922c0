// symtab.h: function symbols of a file's full symbol table (.symtab), for
// symbolizing addresses that dladdr cannot name (executables export no symbols;
// static functions are never exported).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "symbols/result.h"

namespace cudashim::symbols {

struct FunctionSymbol {
  std::uint64_t value = 0;  // link-time address (add the load bias of the module)
  std::uint64_t size = 0;
  std::string name;         // mangled
};

// Reads every defined STT_FUNC symbol of .symtab (falling back to .dynsym when the
// file is stripped), sorted by address. An error names the file.
Result<std::vector<FunctionSymbol>> read_function_symbols(const std::string& path);

// Returns the symbol containing `address` (a link-time address), or nullptr.
const FunctionSymbol* function_at(const std::vector<FunctionSymbol>& sorted, std::uint64_t address);

}  // namespace cudashim::symbols
