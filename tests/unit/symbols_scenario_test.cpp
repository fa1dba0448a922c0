// Tiny ELF scenarios each test builds for itself with cc: a versioned shared
// library with a SONAME and a RUNPATH, an executable that links to it, and the
// same library with its section headers removed.
#include <elf.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "symbols/elf_file.h"
#include "symbols/exports.h"
#include "symbols/section_reader.h"
#include "tests/unit/symbols_test_support.h"

using namespace cudashim::symbols;
using namespace symbols_test;

namespace {

// libscen.so.1: scen_api in two versions (SCEN_1.0 compat, SCEN_2.0 default),
// a weak symbol, a hidden helper, a .nv_fatbin blob and a call to malloc.
const char* const kScenSource = R"(
#include <stdlib.h>
int scen_old(void) { return 1; }
int scen_new(void) { return 2; }
__asm__(".symver scen_old,scen_api@SCEN_1.0");
__asm__(".symver scen_new,scen_api@@SCEN_2.0");
int scen_plain(void) { return 3; }
__attribute__((weak)) int scen_weak(void) { return 4; }
__attribute__((visibility("hidden"))) int scen_hidden(void) { return 5; }
__attribute__((section(".nv_fatbin"), used)) const unsigned char scen_blob[8] = {0x50, 0xed, 0x55, 0xba, 1, 2, 3, 4};
static char scen_zeros[4096];
void* scen_alloc(size_t n) { scen_zeros[0] = 1; return malloc(n); }
)";

const char* const kScenMap = R"(
SCEN_1.0 { global: scen_api; scen_plain; scen_weak; scen_alloc; local: *; };
SCEN_2.0 { global: scen_api; } SCEN_1.0;
)";

const char* const kMainSource = R"(
int scen_api(void);
int main(void) { return scen_api(); }
)";

// Builds <dir>/lib/libscen.so.1 and returns its path.
fs::path build_libscen(const TempDir& dir) {
  fs::create_directories(dir / "lib");
  write_text(dir / "scen.c", kScenSource);
  write_text(dir / "scen.map", kScenMap);
  fs::path lib = dir.path / "lib" / "libscen.so.1";
  run("cc -shared -fPIC -O1 -o " + q(lib) + " " + q(dir / "scen.c") +
      " -Wl,-soname,libscen.so.1 -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/../lib' -Wl,--version-script=" +
      q(dir / "scen.map"));
  return lib;
}

// Builds <dir>/bin/scen_main, a non-PIE executable with DT_RPATH linked to libscen.so.1.
fs::path build_main(const TempDir& dir) {
  fs::create_directories(dir / "bin");
  write_text(dir / "main.c", kMainSource);
  fs::path exe = dir.path / "bin" / "scen_main";
  run("cc -no-pie -o " + q(exe) + " " + q(dir / "main.c") + " -L" + q(dir / "lib") +
      " -l:libscen.so.1 -Wl,--disable-new-dtags -Wl,-rpath,/opt/cudashim/lib");
  return exe;
}

ElfFacts read_ok(const fs::path& path) {
  auto r = read_elf(path.string());
  INFO("read_elf(" << path << "): " << r.error());
  REQUIRE(r.ok());
  return std::move(r).value();
}

const DynamicSymbol* find_symbol(const ElfFacts& f, const std::string& name, const std::string& version) {
  for (const auto& s : f.dynamic_symbols)
    if (s.name == name && s.version == version) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("scenario: a versioned library with SONAME and RUNPATH", "[symbols][scenario]") {
  TempDir dir;
  ElfFacts f = read_ok(build_libscen(dir));

  SECTION("identity and dynamic section") {
    CHECK(f.elf_class == 64);
    CHECK(f.type == ET_DYN);
#if defined(__x86_64__)
    CHECK(f.machine == EM_X86_64);
#endif
    CHECK(f.soname == "libscen.so.1");
    CHECK(f.runpath == "$ORIGIN/../lib");
    CHECK(f.rpath.empty());
    CHECK(f.needed == std::vector<std::string>{"libc.so.6"});
    CHECK(f.interp.empty());
  }
  SECTION("version definitions: base, SCEN_1.0, SCEN_2.0 inheriting SCEN_1.0") {
    REQUIRE(f.version_definitions.size() == 3);
    CHECK(f.version_definitions[0].name == "libscen.so.1");
    CHECK(f.version_definitions[0].is_base);
    CHECK(f.version_definitions[1].name == "SCEN_1.0");
    CHECK(f.version_definitions[1].parents.empty());
    CHECK(f.version_definitions[2].name == "SCEN_2.0");
    CHECK(f.version_definitions[2].parents == std::vector<std::string>{"SCEN_1.0"});
  }
  SECTION("scen_api@SCEN_1.0 and scen_api@@SCEN_2.0") {
    const DynamicSymbol* compat = find_symbol(f, "scen_api", "SCEN_1.0");
    const DynamicSymbol* current = find_symbol(f, "scen_api", "SCEN_2.0");
    REQUIRE(compat != nullptr);
    REQUIRE(current != nullptr);
    CHECK_FALSE(compat->default_version);
    CHECK(current->default_version);
    CHECK(compat->value != current->value);
    CHECK(current->type == STT_FUNC);
    CHECK(defines(f, "scen_api", "SCEN_1.0"));
    CHECK(defines(f, "scen_api", "SCEN_2.0"));
    CHECK_FALSE(defines(f, "scen_api", "SCEN_3.0"));
    CHECK(defines(f, "scen_plain", "SCEN_1.0"));
    CHECK_FALSE(defines(f, "scen_plain", "SCEN_2.0"));
  }
  SECTION("exports: weak counts, local and hidden do not") {
    const DynamicSymbol* weak = find_symbol(f, "scen_weak", "SCEN_1.0");
    REQUIRE(weak != nullptr);
    CHECK(weak->binding == STB_WEAK);
    auto names = defined_dynamic_symbols(f);
    // GNU ld also exports each version name as an ABS symbol, as nm -D shows.
    CHECK(names == std::vector<std::string>{"SCEN_1.0", "SCEN_2.0", "scen_alloc", "scen_api", "scen_plain",
                                            "scen_weak"});
    for (const char* n : {"scen_api", "scen_plain", "scen_weak", "scen_alloc"})
      CHECK(std::binary_search(names.begin(), names.end(), std::string(n)));
    for (const char* n : {"scen_old", "scen_new", "scen_hidden", "scen_zeros", "malloc"})
      CHECK_FALSE(std::binary_search(names.begin(), names.end(), std::string(n)));
    CHECK(std::count(names.begin(), names.end(), "scen_api") == 1);
  }
  SECTION("undefined versioned: malloc@GLIBC_2.2.5 from libc.so.6") {
    auto undef = undefined_versioned(f);
    UndefinedVersioned malloc_ref{"malloc", "GLIBC_2.2.5", "libc.so.6"};
    CHECK(std::find(undef.begin(), undef.end(), malloc_ref) != undef.end());
    REQUIRE(f.version_needs.size() == 1);
    CHECK(f.version_needs[0].file == "libc.so.6");
  }
}

TEST_CASE("scenario: an executable with PT_INTERP and DT_RPATH", "[symbols][scenario]") {
  TempDir dir;
  build_libscen(dir);
  ElfFacts f = read_ok(build_main(dir));

  CHECK(f.type == ET_EXEC);
  CHECK(f.interp == "/lib64/ld-linux-x86-64.so.2");
  CHECK(f.rpath == "/opt/cudashim/lib");
  CHECK(f.runpath.empty());
  CHECK(f.soname.empty());
  REQUIRE(f.needed.size() == 2);
  CHECK(f.needed[0] == "libscen.so.1");
  CHECK(f.needed[1] == "libc.so.6");
  SECTION("the reference to scen_api binds to the default SCEN_2.0 of libscen.so.1") {
    auto undef = undefined_versioned(f);
    UndefinedVersioned ref{"scen_api", "SCEN_2.0", "libscen.so.1"};
    CHECK(std::find(undef.begin(), undef.end(), ref) != undef.end());
    CHECK(f.version_definitions.empty());
    CHECK_FALSE(defines(f, "scen_api", ""));
  }
}

TEST_CASE("scenario: a library whose section headers were removed", "[symbols][scenario]") {
  TempDir dir;
  auto bytes = read_bytes(build_libscen(dir));
  poke_le(bytes, kEhdrShoff, 0, 8);
  poke_le(bytes, kEhdrShnum, 0, 2);
  poke_le(bytes, kEhdrShstrndx, 0, 2);
  write_bytes(dir / "noshdr.so", bytes);

  ElfFacts f = read_ok(dir / "noshdr.so");
  CHECK(f.sections.empty());
  SECTION("the dynamic entries still come from PT_DYNAMIC") {
    CHECK(f.soname == "libscen.so.1");
    CHECK(f.runpath == "$ORIGIN/../lib");
    CHECK(f.needed == std::vector<std::string>{"libc.so.6"});
  }
  SECTION("symbols and versions need the section headers, so they are empty") {
    CHECK(f.dynamic_symbols.empty());
    CHECK(f.version_definitions.empty());
  }
  SECTION("read_section has nothing to find") {
    auto r = read_section((dir / "noshdr.so").string(), ".nv_fatbin", 1024);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == (dir / "noshdr.so").string() + ": no section named .nv_fatbin");
  }
}

TEST_CASE("scenario: corrupt version tables and dynamic section of a built library", "[symbols][scenario]") {
  TempDir dir;
  const fs::path lib = build_libscen(dir);
  ElfFacts good = read_ok(lib);
  const auto original = read_bytes(lib);

  // Overwrites section `name` of the library with `fill` and reads the copy.
  auto corrupt = [&](const std::string& name, char fill) {
    auto it = std::find_if(good.sections.begin(), good.sections.end(),
                           [&](const Section& s) { return s.name == name; });
    REQUIRE(it != good.sections.end());
    auto bytes = original;
    std::fill_n(bytes.begin() + static_cast<long>(it->offset), it->size, fill);
    fs::path out = dir / ("corrupt" + name);
    write_bytes(out, bytes);
    return std::make_pair(out.string(), read_elf(out.string()));
  };

  SECTION(".gnu.version_d full of 0xff: bad aux offset") {
    auto [path, r] = corrupt(".gnu.version_d", '\xff');
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == path + ": bad verdef aux offset");
  }
  SECTION(".gnu.version_r full of 0xff: bad string offset for the file name") {
    auto [path, r] = corrupt(".gnu.version_r", '\xff');
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().rfind(path + ": bad string offset 4294967295 for a version need file", 0) == 0);
  }
  SECTION(".dynstr full of zeros: every name is empty") {
    auto [path, r] = corrupt(".dynstr", '\0');
    REQUIRE(r.ok());
    CHECK(r.value().soname.empty());
    CHECK(r.value().needed == std::vector<std::string>{""});
  }
  SECTION(".dynamic full of 0xff: unknown tags only, no DT_NULL") {
    auto [path, r] = corrupt(".dynamic", '\xff');
    REQUIRE(r.ok());
    CHECK(r.value().soname.empty());
    CHECK(r.value().needed.empty());
    CHECK(r.value().dynamic_symbols.size() == good.dynamic_symbols.size());
  }
  SECTION(".gnu.version all zero: every symbol unversioned") {
    auto [path, r] = corrupt(".gnu.version", '\0');
    REQUIRE(r.ok());
    for (const auto& s : r.value().dynamic_symbols) CHECK(s.version.empty());
  }
}
