// /etc/ld.so.cache: a fake cache written byte by byte, broken ones, and the host's own.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>

#include "symbols/ld_cache.h"
#include "tests/unit/symbols_test_support.h"

using namespace cudashim::symbols;
using namespace symbols_test;

namespace {

struct FakeCacheEntry {
  std::string key, value;
  std::int32_t flags = 0x0303;
  std::uint64_t hwcap = 0;
};

void put_le(std::vector<char>& b, std::size_t at, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) b[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A "glibc-ld.so.cache1.1" file: header, entries, then the strings (offsets from the start).
std::vector<char> fake_cache(const std::vector<FakeCacheEntry>& entries) {
  const std::size_t strings_at = 48 + 24 * entries.size();
  std::vector<char> b(strings_at, 0);
  std::memcpy(b.data(), "glibc-ld.so.cache1.1", 20);
  put_le(b, 20, entries.size(), 4);
  std::string strings;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::size_t e = 48 + 24 * i;
    put_le(b, e, static_cast<std::uint32_t>(entries[i].flags), 4);
    put_le(b, e + 4, strings_at + strings.size(), 4);
    strings += entries[i].key + '\0';
    put_le(b, e + 8, strings_at + strings.size(), 4);
    strings += entries[i].value + '\0';
    put_le(b, e + 16, entries[i].hwcap, 8);
  }
  put_le(b, 24, strings.size(), 4);
  b.insert(b.end(), strings.begin(), strings.end());
  return b;
}

}  // namespace

TEST_CASE("ld.so.cache: the new format, entries and lookups", "[ldcache]") {
  TempDir t;
  write_bytes(t / "ld.so.cache", fake_cache({{"libcuda.so.1", "/glibc-hwcaps/x86-64-v3/libcuda.so.1", 0x0303, 1ull << 62},
                                             {"libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"},
                                             {"libcuda.so.1", "/usr/lib32/libcuda.so.1", 0x0003},
                                             {"libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1"}}));
  auto cache = read_ld_cache((t / "ld.so.cache").string());
  INFO(cache.error());
  REQUIRE(cache.ok());
  REQUIRE(cache.value().entries.size() == 4);
  CHECK(cache.value().entries[3].soname == "libz.so.1");
  CHECK(ld_cache_lookup(cache.value(), "libcuda.so.1", 0x0303) == "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  CHECK(ld_cache_lookup(cache.value(), "libcuda.so.1", 0x0003) == "/usr/lib32/libcuda.so.1");
  CHECK(ld_cache_lookup(cache.value(), "libnope.so", 0x0303) == std::nullopt);
  CHECK(ld_cache_flags_for(64, 62) == 0x0303);
}

TEST_CASE("ld.so.cache: broken files give an error naming the file", "[ldcache]") {
  TempDir t;
  const auto good = fake_cache({{"liba.so", "/a/liba.so"}});
  SECTION("missing") {
    auto r = read_ld_cache((t / "nope").string());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().find((t / "nope").string()) == 0);
  }
  SECTION("every truncation fails cleanly or parses") {
    for (std::size_t n = 0; n < good.size(); ++n) {
      auto r = parse_ld_cache(reinterpret_cast<const std::uint8_t*>(good.data()), n, "cut");
      if (!r.ok()) CHECK(r.error().rfind("cut: ", 0) == 0);
    }
  }
  SECTION("an entry count that does not fit, a string offset outside the file") {
    auto many = good;
    put_le(many, 20, 0xffffffffu, 4);
    CHECK_FALSE(parse_ld_cache(reinterpret_cast<const std::uint8_t*>(many.data()), many.size(), "x").ok());
    auto far = good;
    put_le(far, 48 + 4, 0x7fffffff, 4);
    auto r = parse_ld_cache(reinterpret_cast<const std::uint8_t*>(far.data()), far.size(), "x");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().find("outside") != std::string::npos);
  }
  SECTION("not a cache") {
    write_text(t / "text", "hello, this is not the loader cache at all, not even close");
    CHECK_FALSE(read_ld_cache((t / "text").string()).ok());
  }
}

TEST_CASE("ld.so.cache: the host's cache agrees with ldconfig -p", "[ldcache]") {
  if (!fs::exists("/etc/ld.so.cache")) return;
  auto cache = read_ld_cache();
  INFO(cache.error());
  REQUIRE(cache.ok());
  auto libc = ld_cache_lookup(cache.value(), "libc.so.6", 0x0303);
  REQUIRE(libc.has_value());
  FILE* pipe = popen("ldconfig -p 2>/dev/null | grep -F 'libc.so.6 (libc6,x86-64)'", "r");
  REQUIRE(pipe != nullptr);
  char line[1024] = {};
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  pclose(pipe);
  if (!got) return;  // no ldconfig here: the parse above is the check
  CHECK(std::string(line).find("=> " + *libc) != std::string::npos);
}
