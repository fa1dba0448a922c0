// LdCache: the contents of /etc/ld.so.cache, the loader's soname -> path index
// written by ldconfig (glibc's "glibc-ld.so.cache1.1" format, elf/cache.c).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbols/result.h"

namespace cudashim::symbols {

// One entry of the cache: a file name the loader may look up and the path ldconfig found it at.
struct LdCacheEntry {
  std::string soname;       // e.g. "libcuda.so.1"
  std::string path;         // e.g. "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
  std::int32_t flags = 0;   // FLAG_ELF_LIBC6 (3) | FLAG_X8664_LIB64 (0x300), ... (glibc's ldconfig.h)
  std::uint64_t hwcap = 0;  // non-zero: an entry of a glibc-hwcaps subfolder (glibc 2.33+)
};

struct LdCache {
  std::string path;  // the file it was read from
  std::vector<LdCacheEntry> entries;  // in file order (sorted by ldconfig, most preferred first)
};

// The cache flags the loader accepts for an object of ELF class `elf_class` (32/64) and
// machine `machine` (EM_*): 0x0303 for x86-64, 0x0003 for i386; nullopt if unknown.
std::optional<std::int32_t> ld_cache_flags_for(int elf_class, std::uint16_t machine);

// Parses the cache file at `path` (the new format, alone or after the old "ld.so-1.7.0"
// one). Never throws; a missing, truncated or foreign file gives an error naming it.
Result<LdCache> read_ld_cache(const std::string& path = "/etc/ld.so.cache");

// Parses cache bytes already in memory; `name` is used in error messages only.
Result<LdCache> parse_ld_cache(const std::uint8_t* data, std::size_t size, const std::string& name);

// The path the loader takes from the cache for `soname` and an object with cache
// flags `flags` (see ld_cache_flags_for): the first plain (hwcap 0) entry; nullopt if none.
std::optional<std::string> ld_cache_lookup(const LdCache& cache, std::string_view soname, std::int32_t flags);

}  // namespace cudashim::symbols
