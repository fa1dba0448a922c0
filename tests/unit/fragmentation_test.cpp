// fragmentation_test.cpp: when torch's counters make alloc.fragmentation, at its thresholds
// (policy/rules/fragmentation.h: 256 MiB and 20% of reserved), and when a plain cache does not.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "policy/rules/fragmentation.h"
#include "recorder/recorder.h"
#include "recorder/torch_memory.h"
#include "report/report.h"

using namespace cudashim;
using recorder::TorchDeviceMemory;
using recorder::TorchMoment;

namespace {
constexpr uint64_t MiB = 1ull << 20;

uint64_t fragmented_after(TorchMoment when, TorchDeviceMemory row) {
  recorder::torch_mem_reset();
  recorder::torch_mem_store(when, &row, 1);
  return policy::torch_verdicts().fragmented_devices;
}

TorchDeviceMemory row(uint64_t allocated, uint64_t reserved) {
  TorchDeviceMemory r{};
  r.allocated = r.allocated_peak = allocated;
  r.reserved = r.reserved_peak = reserved;
  r.process_bytes = r.process_peak_bytes = reserved;
  return r;
}
}  // namespace

TEST_CASE("after an OOM: reserved but unallocated, 256 MiB and 20% of reserved", "[fragmentation]") {
  // 256 MiB unallocated of 1280 MiB reserved: exactly 20% and exactly 256 MiB
  CHECK(fragmented_after(TorchMoment::oom, row(1024 * MiB, 1280 * MiB)) == 1);
  CHECK(fragmented_after(TorchMoment::oom, row(1024 * MiB + 1, 1280 * MiB)) == 0);  // one byte under 256 MiB
  CHECK(fragmented_after(TorchMoment::oom, row(1100 * MiB, 1400 * MiB)) == 1);      // 300 MiB, 21.4%
  CHECK(fragmented_after(TorchMoment::oom, row(1300 * MiB, 1600 * MiB)) == 0);      // 300 MiB, 18.75%
  CHECK(fragmented_after(TorchMoment::oom, row(0, 0)) == 0);
  CHECK(fragmented_after(TorchMoment::oom, row(100 * MiB, 300 * MiB)) == 0);  // 67%, but only 200 MiB
}

TEST_CASE("at exit: a plain cache or a peak overhead is not fragmentation; split blocks are", "[fragmentation]") {
  TorchDeviceMemory cache = row(4096 * MiB, 4096 * MiB);  // peaks equal
  cache.allocated = 0;                                     // everything freed, segments kept
  CHECK(fragmented_after(TorchMoment::exit, cache) == 0);
  TorchDeviceMemory split = row(4096 * MiB, 4096 * MiB);
  split.allocated = 2048 * MiB;
  split.inactive_split = 1024 * MiB;  // 25% of reserved, in segments still in use
  CHECK(fragmented_after(TorchMoment::exit, split) == 1);
  split.inactive_split = 800 * MiB;  // 19.5%
  CHECK(fragmented_after(TorchMoment::exit, split) == 0);
  split.inactive_split = 0;
  split.inactive_split_peak = 1024 * MiB;  // at some point, 25% of the reserved peak
  CHECK(fragmented_after(TorchMoment::exit, split) == 1);
  split.inactive_split_peak = 200 * MiB;  // under 256 MiB
  CHECK(fragmented_after(TorchMoment::exit, split) == 0);
  // 10 GiB cached, peaks reset (torch.cuda.reset_peak_memory_stats), then a 1 GiB peak: the
  // peaks differ by 9 GiB, and nothing was ever split
  TorchDeviceMemory reset = row(1024 * MiB, 10240 * MiB);
  reset.allocated = 0;
  CHECK(fragmented_after(TorchMoment::exit, reset) == 0);
  recorder::torch_mem_reset();
}

TEST_CASE("retries add up over devices; the later snapshot's counter wins", "[fragmentation]") {
  recorder::torch_mem_reset();
  TorchDeviceMemory rows[2] = {row(MiB, MiB), row(MiB, MiB)};
  rows[0].alloc_retries = 2;
  rows[1].device = 1;
  rows[1].alloc_retries = 3;
  recorder::torch_mem_store(TorchMoment::exit, rows, 2);
  TorchDeviceMemory at_oom = row(MiB, MiB);
  at_oom.alloc_retries = 1;  // read earlier: smaller
  recorder::torch_mem_store(TorchMoment::oom, &at_oom, 1);
  CHECK(policy::torch_verdicts().alloc_retries == 5);
  recorder::ProcessInfo info;
  recorder::capture_process_info(info);
  const auto torch = nlohmann::json::parse(report::render_report({info}))["torch_memory"];
  REQUIRE(torch["snapshots"].size() == 2);
  CHECK(torch["snapshots"][0]["moment"] == "oom");
  CHECK(torch["snapshots"][1]["moment"] == "exit");
  CHECK(torch["snapshots"][1]["devices"][1]["device"] == 1);
  recorder::torch_mem_reset();
}
