// fuzz_stream: hostile event streams (cudashim-*.ndjson) never crash, hang or throw out of
// `cudashim report`. The input is the stream of a process that left no report (summarized
// up to its last good line, a damaged line named once) and also the stream beside a good
// report, which the HTML page reads for its memory plot (tests/fuzz/run_folder.h).
#include <cstring>

#include "tests/fuzz/run_folder.h"

namespace {

// A report the HTML page draws a stream's memory for.
constexpr char kReport[] =
    R"({"schema": "cudashim.report/1", "process": {"pid": 2, "rank": 0, "host": "h", "exe": "/bin/x"},)"
    R"( "api": {}, "blocking": {"blocked_ns": 0, "wall_ns": 1}, "memory": {"devices": []}, "findings": []})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static cudashim::fuzz::RunFolder dir;
  static const bool once = [] {
    dir.write("cudashim-host-2.json", reinterpret_cast<const std::uint8_t*>(kReport), std::strlen(kReport));
    return true;
  }();
  (void)once;
  dir.write("cudashim-host-1.ndjson", data, size);
  dir.write("cudashim-host-2.ndjson", data, size);
  (void)cudashim::fuzz::read_and_render(dir, 2);  // the report and the stream with no report
  return 0;
}
