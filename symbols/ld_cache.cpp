#include "symbols/ld_cache.h"

#include <elf.h>

#include <cstring>
#include <iterator>

#include "symbols/bounded_read.h"

namespace cudashim::symbols {
namespace {

// Layout of glibc's sysdeps/generic/dl-cache.h (little-endian hosts only).
constexpr char kOldMagic[] = "ld.so-1.7.0";            // 11 bytes, then u32 nlibs at offset 12
constexpr std::size_t kOldHeader = 16, kOldEntry = 12;  // struct cache_file, struct file_entry
constexpr char kNewMagic[] = "glibc-ld.so.cache";       // 17 bytes, then "1.1"
constexpr char kNewVersion[] = "1.1";
constexpr std::size_t kNewHeader = 48, kNewEntry = 24;  // struct cache_file_new, struct file_entry_new
constexpr std::size_t kMaxCacheBytes = 64u << 20;       // a real cache is well under 1 MiB

std::uint32_t u32_at(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::uint64_t u64_at(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The NUL-terminated string at `offset` of [base, base+size), or nullopt.
std::optional<std::string> string_at(const std::uint8_t* base, std::size_t size, std::uint64_t offset) {
  if (offset >= size) return std::nullopt;
  const void* nul = std::memchr(base + offset, '\0', size - offset);
  if (nul == nullptr) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(base + offset), static_cast<const std::uint8_t*>(nul) - (base + offset));
}

}  // namespace

std::optional<std::int32_t> ld_cache_flags_for(int elf_class, std::uint16_t machine) {
  constexpr std::int32_t kElfLibc6 = 0x0003, kX8664Lib64 = 0x0300, kAarch64Lib64 = 0x0a00;
  if (elf_class == 64 && machine == EM_X86_64) return kElfLibc6 | kX8664Lib64;
  if (elf_class == 32 && machine == EM_386) return kElfLibc6;
  if (elf_class == 64 && machine == EM_AARCH64) return kElfLibc6 | kAarch64Lib64;
  return std::nullopt;
}

Result<LdCache> parse_ld_cache(const std::uint8_t* data, std::size_t size, const std::string& name) {
  std::size_t start = 0;  // where the new-format header begins; its string offsets count from there
  if (size >= kOldHeader && std::memcmp(data, kOldMagic, sizeof kOldMagic - 1) == 0) {
    const std::uint64_t old_libs = u32_at(data + 12);
    if (old_libs > (size - kOldHeader) / kOldEntry) return make_error(name, "truncated old-format ld.so.cache");
    start = (kOldHeader + old_libs * kOldEntry + 7) & ~std::size_t{7};  // ALIGN_CACHE
  }
  if (start > size || size - start < kNewHeader) {
    return make_error(name, start == 0 ? "not an ld.so.cache (too short)" : "old-format ld.so.cache only (not supported)");
  }
  const std::uint8_t* base = data + start;
  const std::size_t avail = size - start;
  if (std::memcmp(base, kNewMagic, sizeof kNewMagic - 1) != 0)
    return make_error(name, "not an ld.so.cache (no \"glibc-ld.so.cache\" magic)");
  if (std::memcmp(base + sizeof kNewMagic - 1, kNewVersion, sizeof kNewVersion - 1) != 0)
    return make_error(name, "unsupported ld.so.cache version (expected 1.1)");
  const std::uint64_t nlibs = u32_at(base + 20);
  if (nlibs > (avail - kNewHeader) / kNewEntry)
    return make_error(name, "truncated ld.so.cache: " + std::to_string(nlibs) + " entries do not fit");

  LdCache cache;
  cache.path = name;
  cache.entries.reserve(nlibs);
  for (std::uint64_t i = 0; i < nlibs; ++i) {
    const std::uint8_t* e = base + kNewHeader + i * kNewEntry;
    auto key = string_at(base, avail, u32_at(e + 4));
    auto value = string_at(base, avail, u32_at(e + 8));
    if (!key || !value) return make_error(name, "ld.so.cache entry " + std::to_string(i) + " has a string outside the file");
    std::int32_t flags;
    std::memcpy(&flags, e, sizeof flags);
    cache.entries.push_back(LdCacheEntry{std::move(*key), std::move(*value), flags, u64_at(e + 16)});
  }
  return cache;
}

Result<LdCache> read_ld_cache(const std::string& path) {
  auto bytes = read_regular(path, kMaxCacheBytes);
  if (!bytes) return bytes.to_error();
  const std::string& b = bytes.value();
  return parse_ld_cache(reinterpret_cast<const std::uint8_t*>(b.data()), b.size(), path);
}

std::optional<std::string> ld_cache_lookup(const LdCache& cache, std::string_view soname, std::int32_t flags) {
  for (const auto& e : cache.entries)
    if (e.hwcap == 0 && e.flags == flags && e.soname == soname) return e.path;
  return std::nullopt;
}

}  // namespace cudashim::symbols
