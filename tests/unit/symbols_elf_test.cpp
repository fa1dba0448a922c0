// read_elf() and the exports helpers on real libraries of this machine.
// Every expected value below was checked with readelf -dVSW / nm -DS.
#include <elf.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "symbols/elf_file.h"
#include "symbols/exports.h"

using namespace cudashim::symbols;

namespace {

const char* const kCudart = "/usr/local/cuda/lib64/libcudart.so.13";
const char* const kCublas = "/usr/local/cuda/lib64/libcublas.so.13";
const char* const kCudaStub = "/usr/local/cuda/lib64/stubs/libcuda.so";
const char* const kLibc = "/usr/lib/x86_64-linux-gnu/libc.so.6";

ElfFacts read_ok(const std::string& path) {
  auto r = read_elf(path);
  INFO("read_elf(" << path << "): " << r.error());
  REQUIRE(r.ok());
  return std::move(r).value();
}

const DynamicSymbol* find_symbol(const ElfFacts& f, const std::string& name, const std::string& version) {
  for (const auto& s : f.dynamic_symbols)
    if (s.name == name && s.version == version) return &s;
  return nullptr;
}

const VersionNeed* find_need(const ElfFacts& f, const std::string& file) {
  for (const auto& n : f.version_needs)
    if (n.file == file) return &n;
  return nullptr;
}

bool needs_version(const VersionNeed& need, const std::string& version) {
  return std::any_of(need.versions.begin(), need.versions.end(),
                     [&](const NeededVersion& v) { return v.name == version; });
}

const Section* find_section(const ElfFacts& f, const std::string& name) {
  for (const auto& s : f.sections)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("libcudart.so.13: identity, dynamic section, versions, symbols", "[symbols][realbin]") {
  ElfFacts f = read_ok(kCudart);

  SECTION("identity") {
    CHECK(f.path == kCudart);
    CHECK(f.elf_class == 64);
    CHECK(f.machine == EM_X86_64);
    CHECK(f.type == ET_DYN);
    CHECK(f.interp.empty());
  }
  SECTION("dynamic section") {
    CHECK(f.soname == "libcudart.so.13");
    CHECK(f.needed == std::vector<std::string>{"libc.so.6", "ld-linux-x86-64.so.2", "libdl.so.2",
                                               "libpthread.so.0", "librt.so.1"});
    CHECK(f.rpath.empty());
    CHECK(f.runpath.empty());
  }
  SECTION("version definitions: base libcudart.so.13 (index 1) and libcudart.so.13 (index 2)") {
    REQUIRE(f.version_definitions.size() == 2);
    CHECK(f.version_definitions[0].name == "libcudart.so.13");
    CHECK(f.version_definitions[0].is_base);
    CHECK(f.version_definitions[0].index == 1);
    CHECK(f.version_definitions[1].name == "libcudart.so.13");
    CHECK_FALSE(f.version_definitions[1].is_base);
    CHECK(f.version_definitions[1].index == 2);
    CHECK(f.version_definitions[1].parents.empty());
  }
  SECTION("version needs: 5 files, libc.so.6 -> 6 GLIBC versions") {
    REQUIRE(f.version_needs.size() == 5);
    CHECK(f.version_needs[0].file == "libdl.so.2");
    const VersionNeed* libc = find_need(f, "libc.so.6");
    REQUIRE(libc != nullptr);
    REQUIRE(libc->versions.size() == 6);
    CHECK(libc->versions[0].name == "GLIBC_2.14");
    CHECK(libc->versions[0].index == 12);
    CHECK(needs_version(*libc, "GLIBC_2.2.5"));
    CHECK(needs_version(*libc, "GLIBC_2.17"));
    const VersionNeed* ld = find_need(f, "ld-linux-x86-64.so.2");
    REQUIRE(ld != nullptr);
    REQUIRE(ld->versions.size() == 1);
    CHECK(ld->versions[0].name == "GLIBC_2.3");
    CHECK(ld->versions[0].index == 9);
  }
  SECTION("dynamic symbols: cudaMalloc@@libcudart.so.13 at 0x50ad0, 0x1f5 bytes") {
    CHECK(f.dynamic_symbols.size() == 583);  // .dynsym has 584 entries, the null one left out
    const DynamicSymbol* s = find_symbol(f, "cudaMalloc", "libcudart.so.13");
    REQUIRE(s != nullptr);
    CHECK(s->defined);
    CHECK(s->default_version);
    CHECK(s->binding == STB_GLOBAL);
    CHECK(s->type == STT_FUNC);
    CHECK(s->value == 0x50ad0);
    CHECK(s->size == 0x1f5);
    CHECK(s->version_index == 2);
    const DynamicSymbol* atexit = find_symbol(f, "__cxa_atexit", "GLIBC_2.2.5");
    REQUIRE(atexit != nullptr);
    CHECK_FALSE(atexit->defined);
    CHECK_FALSE(atexit->default_version);
  }
  SECTION("sections: 28 headers, .dynsym at 0xef0 with 0x36c0 bytes") {
    CHECK(f.sections.size() == 28);
    CHECK(f.sections[0].type == SHT_NULL);
    const Section* dynsym = find_section(f, ".dynsym");
    REQUIRE(dynsym != nullptr);
    CHECK(dynsym->type == SHT_DYNSYM);
    CHECK(dynsym->offset == 0xef0);
    CHECK(dynsym->size == 0x36c0);
    CHECK(dynsym->flags == SHF_ALLOC);
    const Section* verneed = find_section(f, ".gnu.version_r");
    REQUIRE(verneed != nullptr);
    CHECK(verneed->type == SHT_GNU_verneed);
    CHECK(verneed->offset == 0x7bf0);
    CHECK(verneed->size == 0x100);
  }
  SECTION("exports") {
    CHECK(defines(f, "cudaMalloc", "libcudart.so.13"));
    CHECK(defines(f, "cudaMalloc", ""));
    CHECK_FALSE(defines(f, "cudaMalloc", "libcudart.so.12"));
    CHECK_FALSE(defines(f, "__cxa_atexit", ""));  // undefined here
    CHECK_FALSE(defines(f, "cuMemAlloc_v2", ""));
    auto names = defined_dynamic_symbols(f);
    CHECK(names.size() == 423);  // nm -D --defined-only, names without versions, unique
    CHECK(std::is_sorted(names.begin(), names.end()));
    CHECK(std::binary_search(names.begin(), names.end(), "cudaMalloc"));
    CHECK(std::binary_search(names.begin(), names.end(), "cudaFree"));
    CHECK_FALSE(std::binary_search(names.begin(), names.end(), "__cxa_atexit"));
  }
  SECTION("undefined versioned symbols name their needed file") {
    auto undef = undefined_versioned(f);
    CHECK(undef.size() == 157);  // nm -D --undefined-only | grep -c @
    UndefinedVersioned atexit{"__cxa_atexit", "GLIBC_2.2.5", "libc.so.6"};
    CHECK(std::find(undef.begin(), undef.end(), atexit) != undef.end());
    for (const auto& u : undef) {
      INFO(u.name << "@" << u.version);
      CHECK(!u.file.empty());
    }
  }
}

TEST_CASE("libcublas.so.13: needs libcublasLt.so.13, RUNPATH $ORIGIN, .nv_fatbin", "[symbols][realbin]") {
  ElfFacts f = read_ok(kCublas);
  CHECK(f.soname == "libcublas.so.13");
  REQUIRE(f.needed.size() == 8);
  CHECK(f.needed[0] == "libcublasLt.so.13");
  CHECK(f.needed.back() == "ld-linux-x86-64.so.2");
  CHECK(f.runpath == "$ORIGIN");  // raw, not expanded
  CHECK(f.rpath.empty());
  CHECK(f.sections.size() == 34);
  const Section* fatbin = find_section(f, ".nv_fatbin");
  REQUIRE(fatbin != nullptr);
  CHECK(fatbin->type == SHT_PROGBITS);
  CHECK(fatbin->offset == 0x6d4f88);
  CHECK(fatbin->size == 0x2c4b618);
}

TEST_CASE("stubs/libcuda.so: unversioned driver API exports", "[symbols][realbin]") {
  ElfFacts f = read_ok(kCudaStub);
  CHECK(f.soname == "libcuda.so.1");
  CHECK(f.needed.empty());
  CHECK(f.version_definitions.empty());
  CHECK(f.version_needs.empty());
  CHECK(defines(f, "cuMemAlloc_v2", ""));
  CHECK(defines(f, "cuGetProcAddress_v2", ""));
  CHECK_FALSE(defines(f, "cuMemAlloc_v2", "libcuda.so.1"));  // no versions in the stub
  const DynamicSymbol* s = find_symbol(f, "cuMemAlloc_v2", "");
  REQUIRE(s != nullptr);
  CHECK(s->value == 0x9e1f);
  CHECK(s->size == 0xb);
  CHECK(s->version_index == 0);
  CHECK(defined_dynamic_symbols(f).size() == 637);
  CHECK(undefined_versioned(f).empty());
}

TEST_CASE("libc.so.6: GLIBC version definitions and dlsym in two versions", "[symbols][realbin]") {
  ElfFacts f = read_ok(kLibc);
  CHECK(f.soname == "libc.so.6");
  CHECK(f.needed == std::vector<std::string>{"ld-linux-x86-64.so.2"});
  CHECK(f.interp == "/lib64/ld-linux-x86-64.so.2");  // libc.so.6 is runnable

  SECTION("version definitions") {
    REQUIRE(f.version_definitions.size() == 39);
    CHECK(f.version_definitions[0].name == "libc.so.6");
    CHECK(f.version_definitions[0].is_base);
    auto it = std::find_if(f.version_definitions.begin(), f.version_definitions.end(),
                           [](const VersionDefinition& d) { return d.name == "GLIBC_2.34"; });
    REQUIRE(it != f.version_definitions.end());
    CHECK(it->index == 35);
    CHECK_FALSE(it->is_base);
    auto v235 = std::find_if(f.version_definitions.begin(), f.version_definitions.end(),
                             [](const VersionDefinition& d) { return d.name == "GLIBC_2.35"; });
    REQUIRE(v235 != f.version_definitions.end());
    CHECK(v235->parents == std::vector<std::string>{"GLIBC_2.34"});
  }
  SECTION("dlsym@@GLIBC_2.34 is the default, dlsym@GLIBC_2.2.5 the compat one") {
    const DynamicSymbol* current = find_symbol(f, "dlsym", "GLIBC_2.34");
    const DynamicSymbol* compat = find_symbol(f, "dlsym", "GLIBC_2.2.5");
    REQUIRE(current != nullptr);
    REQUIRE(compat != nullptr);
    CHECK(current->default_version);
    CHECK_FALSE(compat->default_version);
    CHECK(current->value == 0x855b0);
    CHECK(compat->value == 0x855b0);
    CHECK(current->size == 0xb9);
    CHECK(defines(f, "dlsym", "GLIBC_2.34"));
    CHECK(defines(f, "dlsym", "GLIBC_2.2.5"));
    CHECK(defines(f, "dlsym", ""));
    CHECK_FALSE(defines(f, "dlsym", "GLIBC_2.35"));
    CHECK(defines(f, "malloc", "GLIBC_2.2.5"));
  }
  SECTION("names are unique although dlsym has two versions") {
    auto names = defined_dynamic_symbols(f);
    CHECK(std::count(names.begin(), names.end(), "dlsym") == 1);
  }
}
