// loaded_memory.h: reading a loaded object's own dynamic section from memory (inside the
// preload library, which has no libelf). Every pointer is checked against the object's
// loaded segments before it is read.
#pragma once
#include <link.h>

#include <cstddef>
#include <cstdint>

namespace cudashim::symbols {

// True when [p, p+n) lies inside one of the object's PT_LOAD segments.
inline bool in_segments(const dl_phdr_info* info, uintptr_t p, size_t n) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    if (p >= lo && p + n <= hi && p + n >= p) return true;
  }
  return false;
}

// A d_ptr of the dynamic section as an address: glibc relocates them in place on most
// targets; an unrelocated (small) value is taken relative to the object's base.
inline uintptr_t relocated(const dl_phdr_info* info, uintptr_t v) {
  return v != 0 && v < info->dlpi_addr ? v + info->dlpi_addr : v;
}

// The object's PT_DYNAMIC array, or nullptr (none, or not inside its segments).
inline const ElfW(Dyn)* dynamic_of(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
      const uintptr_t d = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
      return in_segments(info, d, sizeof(ElfW(Dyn))) ? reinterpret_cast<const ElfW(Dyn)*>(d) : nullptr;
    }
  return nullptr;
}

}  // namespace cudashim::symbols
