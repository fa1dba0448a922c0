// fragmentation.cpp: PyTorch's counters against the ledger, and the findings they make.
#include "policy/fragmentation.h"

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

bool torch_fragmented(const recorder::TorchDeviceMemory& d, recorder::TorchMoment when) { return fragmented(d, when); }

}  // namespace cudashim::policy
