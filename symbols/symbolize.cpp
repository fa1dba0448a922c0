// symbolize.cpp: dladdr + the C++ demangler.
#include "symbols/symbolize.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace cudashim::symbols {

Symbolized symbolize(const void* ra) {
  Symbolized s;
  Dl_info info;
  const auto* addr = static_cast<const char*>(ra) - 1;
  if (dladdr(addr, &info) == 0) return s;
  if (info.dli_fname != nullptr) {
    const char* base = std::strrchr(info.dli_fname, '/');
    s.module = base ? base + 1 : info.dli_fname;
    s.path = info.dli_fname;
  }
  if (info.dli_sname != nullptr) {
    int status = 0;
    char* d = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    s.function = status == 0 && d ? d : info.dli_sname;
    std::free(d);
    s.offset = static_cast<unsigned long>(static_cast<const char*>(ra) - static_cast<const char*>(info.dli_saddr));
  } else if (info.dli_fbase != nullptr) {
    s.offset = static_cast<unsigned long>(static_cast<const char*>(ra) - static_cast<const char*>(info.dli_fbase));
  }
  return s;
}

std::string to_string(const Symbolized& s) {
  if (s.module.empty()) return "?";
  if (s.function.empty()) return fmt::format("{}+{:#x}", s.module, s.offset);
  return fmt::format("{}!{}+{:#x}", s.module, s.function, s.offset);
}

bool is_runtime_frame(const Symbolized& s) {
  for (const char* prefix : {"libcudashim", "libcuda.so", "libcudart", "libcublas", "libcudnn", "libnccl"})
    if (s.module.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace cudashim::symbols
