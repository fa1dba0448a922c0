// read_section(): raw bytes of one named section, with a size bound.
#include <catch2/catch.hpp>
#include <string>

#include "symbols/section_reader.h"
#include "tests/unit/symbols_test_support.h"

using namespace cudashim::symbols;
using namespace symbols_test;

TEST_CASE("read_section on libcublas.so.13's .nv_fatbin", "[symbols][realbin]") {
  const std::string path = "/usr/local/cuda/lib64/libcublas.so.13";

  SECTION("over the bound: nothing is read") {
    auto r = read_section(path, ".nv_fatbin", 1 << 20);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == path + ": section .nv_fatbin is 46446104 bytes, over the limit of 1048576");
  }
  SECTION("within the bound: all 0x2c4b618 bytes, starting with the fatbin magic") {
    auto r = read_section(path, ".nv_fatbin", 64u << 20);
    REQUIRE(r.ok());
    const auto& bytes = r.value();
    REQUIRE(bytes.size() == 0x2c4b618);
    // xxd -s 0x6d4f88 -l 16: 50ed 55ba 0100 1000 503a 0100 0000 0000
    const std::vector<std::uint8_t> head{0x50, 0xed, 0x55, 0xba, 0x01, 0x00, 0x10, 0x00,
                                         0x50, 0x3a, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00};
    CHECK(std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + 16) == head);
  }
  SECTION("no such section") {
    auto r = read_section(path, ".nv_nothing", 1024);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == path + ": no section named .nv_nothing");
  }
}

TEST_CASE("read_section on a library built by the test", "[symbols][scenario]") {
  TempDir dir;
  write_text(dir / "blob.c",
             "__attribute__((section(\".nv_fatbin\"), used)) const unsigned char blob[8] = "
             "{0x50, 0xed, 0x55, 0xba, 1, 2, 3, 4};\n"
             "static char zeros[4096];\n"
             "char* touch(void) { return zeros; }\n");
  const std::string lib = (dir / "libblob.so").string();
  run("cc -shared -fPIC -o " + q(lib) + " " + q(dir / "blob.c"));

  SECTION("exact bytes") {
    auto r = read_section(lib, ".nv_fatbin", 8);
    REQUIRE(r.ok());
    CHECK(r.value() == std::vector<std::uint8_t>{0x50, 0xed, 0x55, 0xba, 1, 2, 3, 4});
  }
  SECTION("one byte over the bound") {
    auto r = read_section(lib, ".nv_fatbin", 7);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == lib + ": section .nv_fatbin is 8 bytes, over the limit of 7");
  }
  SECTION("SHT_NOBITS has no bytes to read") {
    auto r = read_section(lib, ".bss", 1 << 20);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == lib + ": section .bss has no bytes in the file (SHT_NOBITS)");
  }
  SECTION("not an ELF file") {
    write_text(dir / "notes.txt", "hello\n");
    auto r = read_section((dir / "notes.txt").string(), ".nv_fatbin", 8);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == (dir / "notes.txt").string() + ": not an ELF file (bad magic)");
  }
}
