// fragmentation.cpp: PyTorch's counters against the ledger, and the findings they make.
#include "policy/fragmentation.h"

#include <fmt/format.h>

#include <algorithm>

#include "recorder/torch_memory.h"

namespace cudashim::policy {
namespace {

using recorder::TorchDeviceMemory;
using recorder::TorchMemSnapshot;
using recorder::TorchMoment;

uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

bool fragmented(uint64_t unallocated, uint64_t reserved) {
  return unallocated >= kFragMinBytes && reserved > 0 &&
         static_cast<double>(unallocated) >= kFragMinShare * static_cast<double>(reserved);
}

// After an out-of-memory torch has just released every free segment: what it still holds
// unallocated is the free part of segments in use. At exit, reserved-but-unallocated alone
// would flag a plain cache (tensors freed, segments kept for reuse), and so would peak
// reserved against peak allocated (two moments that need not coincide, and
// torch.cuda.reset_peak_memory_stats() resets both to values of a third). What counts is the
// free parts of segments that are partly in use (inactive_split_bytes, which
// torch.cuda.empty_cache() cannot return): now, or at their peak against the reserved peak
// (a lower bound of the share at that moment).
bool fragmented(const TorchDeviceMemory& d, TorchMoment when) {
  if (when == TorchMoment::oom) return fragmented(minus(d.reserved, d.allocated), d.reserved);
  return fragmented(d.inactive_split, d.reserved) || fragmented(d.inactive_split_peak, d.reserved_peak);
}

std::string snapshot_json(const TorchMemSnapshot& s, TorchMoment when) {
  std::string out = fmt::format("{{\"moment\": \"{}\", \"devices\": [", when == TorchMoment::oom ? "oom" : "exit");
  for (int i = 0; i < s.count; ++i) {
    const TorchDeviceMemory& d = s.devices[i];
    const uint64_t unallocated = minus(d.reserved, d.allocated);
    out += fmt::format(
        "{}{{\"device\": {}, \"allocated_bytes\": {}, \"allocated_peak_bytes\": {}, \"reserved_bytes\": {}, "
        "\"reserved_peak_bytes\": {}, \"active_bytes\": {}, \"inactive_split_bytes\": {}, \"inactive_split_peak_bytes\": {}, "
        "\"segments\": {}, "
        "\"alloc_retries\": {}, \"ooms\": {}, \"process_bytes\": {}, \"process_peak_bytes\": {}, "
        "\"reserved_unallocated_bytes\": {}, \"peak_overhead_bytes\": {}, \"outside_torch_bytes\": {}, "
        "\"fragmentation\": {:.4f}, \"fragmented\": {}}}",
        i ? ", " : "", d.device, d.allocated, d.allocated_peak, d.reserved, d.reserved_peak, d.active,
        d.inactive_split, d.inactive_split_peak, d.segments, d.alloc_retries, d.ooms, d.process_bytes, d.process_peak_bytes, unallocated,
        minus(d.reserved_peak, d.allocated_peak),
        static_cast<int64_t>(d.process_bytes) - static_cast<int64_t>(d.reserved),
        d.reserved ? static_cast<double>(unallocated) / static_cast<double>(d.reserved) : 0.0,
        fragmented(d, when) ? "true" : "false");
  }
  return out + "]}";
}

}  // namespace

TorchVerdicts torch_verdicts() {
  TorchVerdicts v;
  const TorchMemSnapshot at_exit = recorder::torch_mem_snapshot(TorchMoment::exit);
  const TorchMemSnapshot at_oom = recorder::torch_mem_snapshot(TorchMoment::oom);
  for (int dev = 0; dev < recorder::kTorchMaxDevices; ++dev) {
    bool frag = false;
    uint64_t retries = 0;
    for (const TorchMemSnapshot* s : {&at_oom, &at_exit})
      for (int i = 0; s->taken && i < s->count; ++i)
        if (s->devices[i].device == dev) {
          frag = frag || fragmented(s->devices[i], s == &at_oom ? TorchMoment::oom : TorchMoment::exit);
          retries = std::max(retries, s->devices[i].alloc_retries);  // a counter: the later snapshot is larger
        }
    v.fragmented_devices += frag ? 1 : 0;
    v.alloc_retries += retries;
  }
  return v;
}

std::string torch_memory_report_json() {
  std::string snaps;
  for (TorchMoment when : {TorchMoment::oom, TorchMoment::exit}) {
    const TorchMemSnapshot s = recorder::torch_mem_snapshot(when);
    if (s.taken) snaps += (snaps.empty() ? "" : ", ") + snapshot_json(s, when);
  }
  return fmt::format("  \"torch_memory\": {{\"state\": \"{}\", \"snapshots\": [{}]}},\n",
                     recorder::torch_mem_state_name(recorder::torch_mem_state()), snaps);
}

}  // namespace cudashim::policy
