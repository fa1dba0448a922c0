// read_elf() on files that are missing, not ELF, truncated or corrupt: always
// an error that names the file and says what is wrong, never a crash or a hang.
#include <catch2/catch.hpp>
#include <string>

#include "symbols/elf_file.h"
#include "symbols/section_reader.h"
#include "tests/unit/symbols_test_support.h"

using namespace cudashim::symbols;
using namespace symbols_test;

namespace {

const char* const kCudart = "/usr/local/cuda/lib64/libcudart.so.13";

// read_elf(path) must fail with "<path>: ..." containing `what`.
void require_error(const fs::path& path, const std::string& what) {
  auto r = read_elf(path.string());
  INFO("path: " << path << "\nerror: " << r.error());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().rfind(path.string() + ": ", 0) == 0);
  CHECK(r.error().find(what) != std::string::npos);
}

}  // namespace

TEST_CASE("read_elf rejects missing and non-ELF files with a message", "[symbols]") {
  TempDir dir;

  SECTION("non-existent path") { require_error(dir / "nope.so", "cannot open: No such file or directory"); }
  SECTION("empty file") {
    write_text(dir / "empty.so", "");
    require_error(dir / "empty.so", "empty file");
  }
  SECTION("text file") {
    write_text(dir / "text.so", "INPUT(libfoo.so.1)\n/* a linker script, not a library */\n");
    require_error(dir / "text.so", "not an ELF file (bad magic)");
  }
  SECTION("a directory") { require_error(dir.path, "not a regular file"); }
  SECTION("a character device is refused, not read forever") { require_error("/dev/zero", "not a regular file"); }
  SECTION("an ar archive") {
    write_text(dir / "libx.a", "!<arch>\n");
    require_error(dir / "libx.a", "an ar archive, not an ELF file");
  }
  SECTION("ELF magic and nothing else") {
    write_text(dir / "magic.so", "\x7f" "ELF\x02\x01");
    require_error(dir / "magic.so", "truncated ELF identification (6 bytes)");
  }
}

TEST_CASE("read_elf rejects truncated copies of libcudart.so.13", "[symbols][realbin]") {
  TempDir dir;

  SECTION("64 bytes: the ELF header alone, program headers missing") {
    copy_truncated(kCudart, dir / "libcudart64.so", 64);
    require_error(dir / "libcudart64.so", "truncated program header table");
  }
  SECTION("1000 bytes: section headers (at 702496) missing") {
    copy_truncated(kCudart, dir / "libcudart1000.so", 1000);
    require_error(dir / "libcudart1000.so", "truncated section header table");
  }
  SECTION("40 bytes: inside the ELF header") {
    copy_truncated(kCudart, dir / "libcudart40.so", 40);
    require_error(dir / "libcudart40.so", "truncated ELF header (40 bytes)");
  }
  SECTION("the last section header cut off by one byte") {
    auto size = fs::file_size(kCudart);
    copy_truncated(kCudart, dir / "libcudart-1.so", size - 1);
    require_error(dir / "libcudart-1.so", "truncated section header table (28 entries at offset 702496, file is " +
                                              std::to_string(size - 1) + " bytes)");
  }
  SECTION("read_section gives the same errors") {
    copy_truncated(kCudart, dir / "libcudart1000.so", 1000);
    auto r = read_section((dir / "libcudart1000.so").string(), ".text", 1 << 20);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == (dir / "libcudart1000.so").string() +
                           ": truncated section header table (offset 702496 is past the end of the 1000-byte file)");
  }
}

TEST_CASE("read_elf rejects section header tables that point past the end", "[symbols][realbin]") {
  TempDir dir;
  auto bytes = read_bytes(kCudart);
  const std::uint64_t size = bytes.size();

  SECTION("e_shoff past the end of the file") {
    poke_le(bytes, kEhdrShoff, size + 4096, 8);
    write_bytes(dir / "far.so", bytes);
    require_error(dir / "far.so", "truncated section header table (offset " + std::to_string(size + 4096) +
                                      " is past the end of the " + std::to_string(size) + "-byte file)");
  }
  SECTION("e_shoff inside the file but the table runs past the end") {
    poke_le(bytes, kEhdrShoff, size - 100, 8);
    write_bytes(dir / "tail.so", bytes);
    require_error(dir / "tail.so", "truncated section header table");
  }
  SECTION("e_shoff near 2^64 (offset arithmetic must not wrap)") {
    poke_le(bytes, kEhdrShoff, ~std::uint64_t{0} - 8, 8);
    write_bytes(dir / "wrap.so", bytes);
    require_error(dir / "wrap.so", "truncated section header table");
  }
  SECTION("e_shstrndx out of range: section names cannot be read") {
    poke_le(bytes, kEhdrShstrndx, 200, 2);
    write_bytes(dir / "shstrndx.so", bytes);
    require_error(dir / "shstrndx.so", "name of section 1");
  }
}

TEST_CASE("read_elf survives every truncation and byte corruption of a library", "[symbols][realbin]") {
  TempDir dir;
  const auto original = read_bytes(kCudart);
  const fs::path victim = dir / "victim.so";

  SECTION("truncations: every one that cuts the section header table fails with a message") {
    const std::size_t shdr_end = original.size();  // libcudart's section headers end the file
    for (std::size_t len = 1; len < shdr_end; len += 4093) {
      write_bytes(victim, std::vector<char>(original.begin(), original.begin() + static_cast<long>(len)));
      auto r = read_elf(victim.string());
      INFO("length " << len << ": " << r.error());
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().rfind(victim.string() + ": ", 0) == 0);
    }
  }
  SECTION("0xff over each 64-byte stripe of the headers and version tables") {
    // The ELF header, the program headers and .dynsym/.dynstr/.gnu.version*
    // all lie in the first 0x7cf0 bytes of libcudart.so.13.
    for (std::size_t at = 0; at < 0x7cf0; at += 61) {
      auto bytes = original;
      for (std::size_t i = at; i < at + 64 && i < bytes.size(); ++i) bytes[i] = '\xff';
      write_bytes(victim, bytes);
      auto r = read_elf(victim.string());
      INFO("stripe at " << at << ": " << r.error());
      CHECK((r.ok() || r.error().rfind(victim.string() + ": ", 0) == 0));
    }
  }
  SECTION("0xff over each section header") {
    auto facts = read_elf(kCudart);
    REQUIRE(facts.ok());
    const std::size_t shoff = 702496;
    for (std::size_t i = 0; i < facts.value().sections.size(); ++i) {
      auto bytes = original;
      for (std::size_t b = 0; b < 64; ++b) bytes[shoff + 64 * i + b] = '\xff';
      write_bytes(victim, bytes);
      auto r = read_elf(victim.string());
      INFO("section header " << i << ": " << r.error());
      CHECK((r.ok() || r.error().rfind(victim.string() + ": ", 0) == 0));
    }
  }
}
