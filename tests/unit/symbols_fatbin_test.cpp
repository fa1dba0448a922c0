// The .nv_fatbin reader and the coverage rules, on images built byte by byte (the layout is
// checked against cuobjdump on real libraries by tests/realbin/fatbin_cuobjdump.py).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <random>

#include "symbols/fatbin.h"
#include "tests/unit/symbols_fatbin_image.h"
#include "tests/unit/symbols_test_support.h"

using namespace cudashim::symbols;
using namespace symbols_test;

namespace {

Fatbin parse(const std::vector<std::uint8_t>& image) { return parse_fatbin(image.data(), image.size()); }

FatbinEntry entry(FatbinKind kind, std::uint32_t arch, bool arch_specific = false) {
  FatbinEntry e;
  e.kind = static_cast<std::uint16_t>(kind);
  e.sm_arch = arch;
  e.arch_specific = arch_specific;
  return e;
}

}  // namespace

TEST_CASE("fatbin: containers and entries as nvcc lays them out", "[fatbin]") {
  std::vector<std::uint8_t> image;
  append_container(image, {{2, 80, 0x11, 100}, {2, 90, 0x11, 40}});
  append_container(image, {{2, 90, 0x108011, 33, 64, 120},  // sm_90a, compressed (CUDA 13 flag)
                           {1, 90, 0x2011, 21, 80, 300, 9, 0},  // compute_90 PTX 9.0, compressed (CUDA 12 flag), 80-byte header
                           {8, 90, 0x18011, 16, 120}});        // LTO-IR
  const Fatbin fb = parse(image);
  CHECK(fb.problems.empty());
  CHECK(fb.containers == 2);
  REQUIRE(fb.entries.size() == 5);
  CHECK(fb.entries[0].arch_name() == "sm_80");
  CHECK(fb.entries[0].offset == 16);
  CHECK(fb.entries[0].payload_offset == 16 + 64);
  CHECK(fb.entries[0].payload_size == 104);  // padded to 8
  CHECK_FALSE(fb.entries[0].compressed);
  CHECK(fb.entries[0].version_major == 1);
  CHECK(fb.entries[0].version_minor == 8);
  CHECK(fb.entries[1].container == 0);
  CHECK(fb.entries[2].arch_name() == "sm_90a");
  CHECK(fb.entries[2].compressed);
  CHECK(fb.entries[2].uncompressed_size == 120);
  CHECK(fb.entries[2].container == 1);
  CHECK(fb.entries[3].arch_name() == "compute_90");
  CHECK(fb.entries[3].header_size == 80);
  CHECK(fb.entries[3].compressed);
  CHECK(fb.entries[3].uncompressed_size == 300);
  CHECK(fb.entries[3].version_major == 9);
  CHECK(fb.entries[4].arch_name() == "lto_90");
  CHECK(fb.skipped_bytes == 0);
}

TEST_CASE("fatbin: which code a GPU runs", "[fatbin]") {
  SECTION("a cubin runs on the same major with an equal or higher minor, never across majors") {
    CHECK(cubin_runs_on(entry(FatbinKind::cubin, 80), 80));
    CHECK(cubin_runs_on(entry(FatbinKind::cubin, 80), 86));
    CHECK(cubin_runs_on(entry(FatbinKind::cubin, 80), 89));
    CHECK_FALSE(cubin_runs_on(entry(FatbinKind::cubin, 86), 80));
    CHECK_FALSE(cubin_runs_on(entry(FatbinKind::cubin, 80), 90));
    CHECK_FALSE(cubin_runs_on(entry(FatbinKind::cubin, 90), 100));
    CHECK(cubin_runs_on(entry(FatbinKind::cubin, 100), 103));
    CHECK(cubin_runs_on(entry(FatbinKind::cubin, 120), 121));
  }
  SECTION("arch-specific code (sm_90a) runs on its own SM only") {
    CHECK(cubin_runs_on(entry(FatbinKind::cubin, 90, true), 90));
    CHECK_FALSE(cubin_runs_on(entry(FatbinKind::cubin, 100, true), 103));
    CHECK_FALSE(ptx_jits_for(entry(FatbinKind::ptx, 90, true), 100));
  }
  SECTION("PTX is JIT-compiled for any newer GPU") {
    CHECK(ptx_jits_for(entry(FatbinKind::ptx, 80), 90));
    CHECK(ptx_jits_for(entry(FatbinKind::ptx, 90), 120));
    CHECK_FALSE(ptx_jits_for(entry(FatbinKind::ptx, 90), 86));
    CHECK_FALSE(ptx_jits_for(entry(FatbinKind::cubin, 80), 90));
  }
}

TEST_CASE("fatbin: coverage of a GPU by a whole file", "[fatbin]") {
  // Like examples/sync_patterns: sm_80 + sm_90 SASS, compute_90 PTX.
  std::vector<std::uint8_t> image;
  append_container(image, {{2, 80}, {2, 90}, {1, 90, 0x11, 500, 64, 0, 9, 0}});

  SECTION("sass for 8.0, 8.6 and 9.0") {
    for (int sm : {80, 86, 90}) {
      const Coverage c = coverage_for(parse(image), sm);
      CHECK(c.kind == CoverageKind::sass);
      CHECK(c.containers_sass == 1);
    }
    CHECK(coverage_for(parse(image), 86).best_sass == "sm_80");
  }
  SECTION("PTX JIT for 10.0 and 12.0, with the PTX size") {
    const Coverage c = coverage_for(parse(image), 100);
    CHECK(c.kind == CoverageKind::ptx_jit);
    CHECK(c.containers_ptx_only == 1);
    CHECK(c.best_ptx == "compute_90");
    CHECK(c.ptx_jit_bytes == 504);  // the padded payload of an uncompressed PTX
    CHECK(c.sass_archs == std::vector<std::string>{"sm_80", "sm_90"});
    CHECK(c.ptx_archs == std::vector<std::string>{"compute_90"});
  }
  SECTION("nothing for 7.5: no kernel image") {
    const Coverage c = coverage_for(parse(image), 75);
    CHECK(c.kind == CoverageKind::none);
    CHECK(c.containers_none == 1);
  }
  SECTION("one container with SASS is enough for the file; the others are counted") {
    append_container(image, {{2, 80}, {1, 80, 0x11, 64}});
    const Coverage c = coverage_for(parse(image), 90);
    CHECK(c.kind == CoverageKind::sass);
    CHECK(c.containers == 2);
    CHECK(c.containers_sass == 1);
    CHECK(c.containers_ptx_only == 1);
  }
}

TEST_CASE("fatbin: garbage, truncation and lies never crash and never read past the end", "[fatbin]") {
  std::vector<std::uint8_t> image;
  append_container(image, {{2, 80}, {1, 90, 0x8011, 40, 64, 900}});
  append_container(image, {{2, 90, 0x11, 64, 112}});

  SECTION("empty and tiny inputs") {
    CHECK(parse_fatbin(nullptr, 0).entries.empty());
    CHECK(parse({}).entries.empty());
    CHECK(parse({0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0}).entries.empty());
  }
  SECTION("every truncation parses a prefix") {
    for (std::size_t n = 0; n <= image.size(); ++n) {
      std::vector<std::uint8_t> cut(image.begin(), image.begin() + n);
      const Fatbin fb = parse(cut);
      CHECK(fb.entries.size() <= 3);
      for (const auto& e : fb.entries) CHECK(e.payload_offset + e.payload_size <= n);
    }
  }
  SECTION("a container size past the end, an entry header size of 0, junk between containers") {
    std::vector<std::uint8_t> lie = image;
    put(lie, 8, ~0ull, 8);
    CHECK_FALSE(parse(lie).problems.empty());
    std::vector<std::uint8_t> zero = image;
    put(zero, 16 + 4, 0, 4);
    const Fatbin z = parse(zero);
    CHECK_FALSE(z.problems.empty());
    std::vector<std::uint8_t> junk(64 + image.size(), 0xee);
    std::copy(image.begin(), image.end(), junk.begin() + 64);
    const Fatbin j = parse(junk);
    CHECK(j.entries.size() == 3);
    CHECK(j.skipped_bytes == 64);
  }
  SECTION("random mutations (a small deterministic fuzz)") {
    std::mt19937_64 rng(42);
    for (int round = 0; round < 20000; ++round) {
      std::vector<std::uint8_t> m = image;
      const int edits = 1 + static_cast<int>(rng() % 8);
      for (int k = 0; k < edits; ++k) m[rng() % m.size()] = static_cast<std::uint8_t>(rng());
      if (rng() % 4 == 0) m.resize(rng() % (m.size() + 1));
      const Fatbin fb = parse(m);
      for (const auto& e : fb.entries) REQUIRE(e.payload_offset + e.payload_size <= m.size());
      (void)coverage_for(fb, 90);
    }
  }
  SECTION("the entry cap bounds a huge image of empty entries") {
    std::vector<std::uint8_t> many;
    std::vector<FakeEntry> entries(5000, FakeEntry{2, 90, 0x11, 0});
    append_container(many, entries);
    CHECK(parse_fatbin(many.data(), many.size(), 1000).entries.size() == 1000);
  }
}

TEST_CASE("fatbin: read from an ELF file's .nv_fatbin section", "[fatbin]") {
  TempDir t;
  std::vector<std::uint8_t> image;
  append_container(image, {{2, 86}, {1, 80, 0x11, 64}});
  write_text(t / "k.c", "__attribute__((section(\".nv_fatbin\"), used, aligned(8))) const unsigned char fb[] = {" +
                            c_bytes(image) + "};\nint f(void) { return 0; }\n");
  run("cc -shared -fPIC -o " + q(t / "libk.so") + " " + q(t / "k.c"));
  auto facts = read_elf((t / "libk.so").string());
  REQUIRE(facts.ok());
  auto fb = read_fatbin((t / "libk.so").string(), facts.value());
  REQUIRE(fb.ok());
  REQUIRE(fb.value().entries.size() == 2);
  CHECK(fb.value().entries[0].arch_name() == "sm_86");
  CHECK(coverage_for(fb.value(), 89).kind == CoverageKind::sass);
  CHECK(coverage_for(fb.value(), 90).kind == CoverageKind::ptx_jit);

  // A file with no .nv_fatbin: an empty result, not an error.
  write_text(t / "n.c", "int g(void) { return 0; }\n");
  run("cc -shared -fPIC -o " + q(t / "libn.so") + " " + q(t / "n.c"));
  auto nf = read_elf((t / "libn.so").string());
  REQUIRE(nf.ok());
  auto none = read_fatbin((t / "libn.so").string(), nf.value());
  REQUIRE(none.ok());
  CHECK(none.value().entries.empty());
}

TEST_CASE("fatbin: containers embedded outside .nv_fatbin (as cuFFT keeps its kernels)", "[fatbin]") {
  TempDir t;
  std::vector<std::uint8_t> image;
  append_container(image, {{2, 90}, {1, 90, 0x11, 64}});
  append_container(image, {{2, 100}});
  // In .rodata, after a stray magic that heads no valid container.
  write_text(t / "e.c", "__attribute__((aligned(8))) const unsigned char stray[16] = {0x50,0xed,0x55,0xba,7,7,7,7};\n"
                        "__attribute__((aligned(8), used)) const unsigned char blobs[] = {" + c_bytes(image) +
                            "};\nint f(void) { return stray[0]; }\n");
  run("cc -shared -fPIC -o " + q(t / "libe.so") + " " + q(t / "e.c"));
  auto facts = read_elf((t / "libe.so").string());
  REQUIRE(facts.ok());
  auto fb = read_fatbin((t / "libe.so").string(), facts.value());
  REQUIRE(fb.ok());
  CHECK(fb.value().containers == 2);
  CHECK(fb.value().embedded_containers == 2);
  REQUIRE(fb.value().entries.size() == 3);
  CHECK(fb.value().entries[0].embedded);
  CHECK(fb.value().entries[2].arch_name() == "sm_100");
  CHECK(fb.value().entries[2].container == 1);
  CHECK(coverage_for(fb.value(), 90).kind == CoverageKind::sass);

  SECTION("the scan is bounded and safe on garbage") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 2000; ++round) {
      std::vector<std::uint8_t> m = image;
      for (int k = 0; k < 4; ++k) m[rng() % m.size()] = static_cast<std::uint8_t>(rng());
      m.resize(rng() % (m.size() + 1));
      Fatbin out;
      scan_embedded_fatbins(m.data(), m.size(), out);
      for (const auto& e : out.entries) REQUIRE(e.payload_offset + e.payload_size <= m.size());
    }
  }
}

TEST_CASE("fatbin: containers whose code holds no kernel do not count", "[fatbin]") {
  // ELF objects stand in for cubins: kernels live in ".text.<name>" sections.
  TempDir t;
  write_text(t / "empty.c", "int nothing;\n");
  write_text(t / "kern.c", "__attribute__((section(\".text.my_kernel\"))) void my_kernel(void) {}\n");
  run("cc -c -o " + q(t / "empty.o") + " " + q(t / "empty.c"));
  run("cc -c -o " + q(t / "kern.o") + " " + q(t / "kern.c"));
  const auto to_u8 = [](const std::vector<char>& v) { return std::vector<std::uint8_t>(v.begin(), v.end()); };
  const auto empty = to_u8(read_bytes(t / "empty.o")), kern = to_u8(read_bytes(t / "kern.o"));
  const auto size32 = [](const std::vector<std::uint8_t>& v) { return static_cast<std::uint32_t>(v.size()); };

  std::vector<std::uint8_t> image;
  // nvcc's kind of empty container (sm_75 only: what cuFFT 12's .nv_fatbin holds), then real code for sm_90.
  append_container(image, {{2, 75, 0x11, size32(empty)}}, {{0, empty}});
  append_container(image, {{2, 90, 0x11, size32(kern)}}, {{0, kern}});
  const Fatbin fb = parse(image);
  REQUIRE(fb.entries.size() == 2);
  CHECK(fb.entries[0].kernels == KernelPresence::none);
  CHECK(fb.entries[1].kernels == KernelPresence::some);
  const Coverage c = coverage_for(fb, 90);
  CHECK(c.containers == 1);
  CHECK(c.containers_empty == 1);
  CHECK(c.containers_none == 0);
  CHECK(c.kind == CoverageKind::sass);
  // PTX: ".entry" or not; compressed payloads are unknown and count as code.
  std::vector<std::uint8_t> ptx;
  append_container(ptx, {{1, 80, 0x11, 16}, {2, 80, 0x8011, 16}});
  const Fatbin p = parse(ptx);
  CHECK(p.entries[0].kernels == KernelPresence::some);
  CHECK(p.entries[1].kernels == KernelPresence::unknown);
}
