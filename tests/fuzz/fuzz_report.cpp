// fuzz_report: hostile reports and flight records (cudashim-*.json) never crash, hang or
// throw out of `cudashim report`: each is read, or named in one problem line, and the
// summary, the rank comparison, the HTML page and --json (valid JSON) are rendered from
// whatever was read (tests/fuzz/run_folder.h). The seeds are a report of the sync_rules
// test program (findings with native frames), a flight record and a multi-rank report.
#include "tests/fuzz/run_folder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static cudashim::fuzz::RunFolder dir;
  dir.write("cudashim-host-1.json", data, size);
  (void)cudashim::fuzz::read_and_render(dir, 1);
  return 0;
}
