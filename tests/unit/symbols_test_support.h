// Helpers shared by the symbols_*_test.cpp files: temp dirs, byte edits, cc.
#pragma once

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace symbols_test {

namespace fs = std::filesystem;

// A fresh directory under $TMPDIR, removed with everything in it at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "cudashim-symbols-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path operator/(const std::string& name) const { return path / name; }
};

inline std::vector<char> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in.good());
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const fs::path& p, const std::vector<char>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

inline void write_text(const fs::path& p, std::string_view text) {
  write_bytes(p, std::vector<char>(text.begin(), text.end()));
}

// Copies the first `size` bytes of `from` to `to`.
inline void copy_truncated(const fs::path& from, const fs::path& to, std::size_t size) {
  auto bytes = read_bytes(from);
  REQUIRE(bytes.size() >= size);
  bytes.resize(size);
  write_bytes(to, bytes);
}

// Stores `value` little-endian in `bytes` at `offset` (the tests poke ELF64 LSB headers).
inline void poke_le(std::vector<char>& bytes, std::size_t offset, std::uint64_t value, std::size_t width) {
  REQUIRE(offset + width <= bytes.size());
  for (std::size_t i = 0; i < width; ++i) bytes[offset + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

// ELF64 header field offsets used by the tests.
constexpr std::size_t kEhdrShoff = 0x28, kEhdrShnum = 0x3c, kEhdrShstrndx = 0x3e;

// Runs a shell command (compiler invocations) and requires it to succeed.
inline void run(const std::string& command) {
  INFO("command: " << command);
  REQUIRE(std::system(command.c_str()) == 0);
}

// The shell-quoted form of a path.
inline std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

}  // namespace symbols_test
