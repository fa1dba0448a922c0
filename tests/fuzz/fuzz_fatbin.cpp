// fuzz_fatbin: corrupt or truncated fatbin bytes (a .nv_fatbin section image, or the
// data section of a library that embeds fatbins) never make the parser read outside
// the buffer or loop: fewer entries and a problem line, never a crash.
//
// The input is copied into a buffer of exactly its size, so AddressSanitizer sees any
// read past the end; the fuzzer's own buffer is only checked the same way.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "symbols/fatbin.h"
#include "tests/fuzz/file_image.h"

using namespace cudashim::symbols;
using cudashim::fuzz::contract_broken;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::unique_ptr<std::uint8_t[]> exact(new std::uint8_t[size ? size : 1]);
  if (size) std::memcpy(exact.get(), data, size);
  Fatbin fb = parse_fatbin(exact.get(), size, /*max_entries=*/4096);
  for (const FatbinEntry& e : fb.entries) {
    if (e.offset > size || e.payload_offset > size || e.payload_size > size - e.payload_offset)
      contract_broken("entry at " + std::to_string(e.offset) + ": its payload lies outside the section");
    (void)e.arch_name();
  }
  // The same bytes as part of a data section, at an 8-aligned and an odd file offset.
  scan_embedded_fatbins(exact.get(), size, fb, 4096, 4096);
  scan_embedded_fatbins(exact.get(), size, fb, 4100, 4096);
  if (fb.entries.size() > 3 * 4096) contract_broken("max_entries not honored");
  for (int sm : {52, 80, 86, 90, 120}) {
    const Coverage c = coverage_for(fb, sm);
    if (c.containers_sass + c.containers_ptx_only + c.containers_none != c.containers)
      contract_broken("coverage counts do not add up for sm " + std::to_string(sm));
    (void)coverage_name(c.kind);
  }
  return 0;
}
