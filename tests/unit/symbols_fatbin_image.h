// Builds .nv_fatbin images byte by byte, in the layout fatbin.h documents, for the tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace symbols_test {

struct FakeEntry {
  std::uint16_t kind;      // 1 PTX, 2 cubin, 8 LTO-IR
  std::uint32_t arch;      // 80, 90, ...
  std::uint64_t flags = 0x11;
  std::uint32_t payload = 24;    // payload bytes (padded to 8 in the image)
  std::uint32_t header = 64;     // header size (64, or 80/96/112 with an extension)
  std::uint64_t uncompressed = 0;
  std::uint16_t major = 1, minor = 8;
};

inline void put(std::vector<std::uint8_t>& b, std::size_t at, std::uint64_t v, int width) {
  if (b.size() < at + width) b.resize(at + width, 0);
  for (int i = 0; i < width; ++i) b[at + i] = static_cast<std::uint8_t>((v >> (8 * i)) & 0xff);
}

// A payload of real bytes (e.g. an ELF object standing in for a cubin) for append_container.
struct FakePayload {
  std::size_t entry;                // index in the entries of the container
  std::vector<std::uint8_t> bytes;  // replaces the entry's payload (its size must match)
};

// One container holding `entries`, appended to `image` at an 8-byte boundary.
inline void append_container(std::vector<std::uint8_t>& image, const std::vector<FakeEntry>& entries,
                             const std::vector<FakePayload>& payloads = {}) {
  image.resize((image.size() + 7) & ~std::size_t{7}, 0);
  const std::size_t start = image.size();
  put(image, start, 0xBA55ED50u, 4);
  put(image, start + 4, 1, 2);
  put(image, start + 6, 16, 2);
  std::size_t at = start + 16;
  for (const auto& e : entries) {
    const std::uint64_t padded = (e.payload + 7u) & ~7u;
    put(image, at + 0, e.kind, 2);
    put(image, at + 2, 0x0101, 2);
    put(image, at + 4, e.header, 4);
    put(image, at + 8, padded, 8);
    put(image, at + 16, (e.flags & 0xa000) ? e.payload : 0, 4);
    put(image, at + 24, e.minor, 2);
    put(image, at + 26, e.major, 2);
    put(image, at + 28, e.arch, 4);
    put(image, at + 40, e.flags, 8);
    put(image, at + 56, e.uncompressed, 8);
    image.resize(at + e.header + padded, 0);
    // PTX text that declares a kernel (".entry"); other payloads are opaque letters.
    const std::string text = e.kind == 1 ? ".entry k() {}\n" : "";
    for (std::size_t i = 0; i < e.payload; ++i)
      image[at + e.header + i] = static_cast<std::uint8_t>(i < text.size() ? text[i] : 'A' + i % 26);
    for (const auto& p : payloads)
      if (&entries[p.entry] == &e)
        for (std::size_t i = 0; i < p.bytes.size() && i < e.payload; ++i) image[at + e.header + i] = p.bytes[i];
    at += e.header + padded;
  }
  put(image, start + 8, at - start - 16, 8);
}

// A C array initializer of `bytes` ("0x50,0xed,..."), to put an image in a .nv_fatbin section.
inline std::string c_bytes(const std::vector<std::uint8_t>& bytes) {
  std::string s;
  char buf[8];
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s0x%02x", i ? "," : "", bytes[i]);
    s += buf;
  }
  return s;
}

}  // namespace symbols_test
