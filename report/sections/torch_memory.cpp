// torch_memory.cpp: the report's "torch_memory" section: PyTorch's allocator counters
// (recorder/torch_memory.h) beside the ledger, at an out-of-memory and at exit, with the
// verdicts of policy/rules/fragmentation.h.
#include "policy/rules/fragmentation.h"
#include "recorder/torch_memory.h"
#include "report/sections/sections.h"

namespace cudashim::report {
namespace {

using recorder::TorchDeviceMemory;
using recorder::TorchMemSnapshot;
using recorder::TorchMoment;

uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

void write_snapshot(JsonWriter& w, const TorchMemSnapshot& s, TorchMoment when) {
  auto o = w.object();
  w.member("moment", when == TorchMoment::oom ? "oom" : "exit");
  w.key("devices");
  auto a = w.array();
  for (int i = 0; i < s.count; ++i) {
    const TorchDeviceMemory& d = s.devices[i];
    const uint64_t unallocated = minus(d.reserved, d.allocated);
    auto row = w.object();
    w.member("device", d.device);
    w.member("allocated_bytes", d.allocated);
    w.member("allocated_peak_bytes", d.allocated_peak);
    w.member("reserved_bytes", d.reserved);
    w.member("reserved_peak_bytes", d.reserved_peak);
    w.member("active_bytes", d.active);
    w.member("inactive_split_bytes", d.inactive_split);
    w.member("inactive_split_peak_bytes", d.inactive_split_peak);
    w.member("segments", d.segments);
    w.member("alloc_retries", d.alloc_retries);
    w.member("ooms", d.ooms);
    w.member("process_bytes", d.process_bytes);
    w.member("process_peak_bytes", d.process_peak_bytes);
    w.member("reserved_unallocated_bytes", unallocated);
    w.member("peak_overhead_bytes", minus(d.reserved_peak, d.allocated_peak));
    w.member("outside_torch_bytes", static_cast<int64_t>(d.process_bytes) - static_cast<int64_t>(d.reserved));
    w.member("fragmentation",
             JsonFixed{d.reserved ? static_cast<double>(unallocated) / static_cast<double>(d.reserved) : 0.0, 4});
    w.member("fragmented", policy::torch_fragmented(d, when));
  }
}

}  // namespace

void write_torch_memory(JsonWriter& w, const ReportContext&) {
  auto o = w.object();
  w.member("state", recorder::torch_mem_state_name(recorder::torch_mem_state()));
  w.key("snapshots");
  auto a = w.array();
  for (TorchMoment when : {TorchMoment::oom, TorchMoment::exit}) {
    const TorchMemSnapshot s = recorder::torch_mem_snapshot(when);
    if (s.taken) write_snapshot(w, s, when);
  }
}

}  // namespace cudashim::report
