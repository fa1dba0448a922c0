// fragmentation.cpp: PyTorch's counters against the ledger, and the findings they make.
#include "policy/rules/fragmentation.h"

#include <algorithm>
#include <vector>

#include "recorder/gpu_samples.h"
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

// NVML's total memory of CUDA device `dev` from the latest health sample that has it; 0 when none does.
uint64_t device_total_bytes(const std::vector<recorder::GpuHealthSample>& health, int dev) {
  for (auto it = health.rbegin(); it != health.rend(); ++it)
    if (it->device == dev && (it->have & recorder::GpuHealthSample::kMemory) && it->mem_total_bytes > 0)
      return it->mem_total_bytes;
  return 0;
}

}  // namespace

TorchVerdicts torch_verdicts() {
  TorchVerdicts v;
  const TorchMemSnapshot at_exit = recorder::torch_mem_snapshot(TorchMoment::exit);
  const TorchMemSnapshot at_oom = recorder::torch_mem_snapshot(TorchMoment::oom);
  if (!at_exit.taken && !at_oom.taken) return v;
  const std::vector<recorder::GpuHealthSample> health = recorder::gpu_health_samples();
  for (int dev = 0; dev < recorder::kTorchMaxDevices; ++dev) {
    bool frag = false, ran_short = false;
    uint64_t retries = 0, reserved_peak = 0;
    for (const TorchMemSnapshot* s : {&at_oom, &at_exit})
      for (int i = 0; s->taken && i < s->count; ++i)
        if (s->devices[i].device == dev) {
          const bool oom = s == &at_oom;
          frag = frag || fragmented(s->devices[i], oom ? TorchMoment::oom : TorchMoment::exit);
          ran_short = ran_short || oom || s->devices[i].ooms > 0;
          retries = std::max(retries, s->devices[i].alloc_retries);  // a counter: the later snapshot is larger
          reserved_peak = std::max(reserved_peak, s->devices[i].reserved_peak);
        }
    if (frag) {
      const uint64_t total = device_total_bytes(health, dev);
      const bool pressed = ran_short || retries > 0 || total == 0 ||
                           static_cast<double>(reserved_peak) >= kFragPressureShare * static_cast<double>(total);
      v.fragmented_devices += 1;
      v.fragmented_under_pressure += pressed ? 1 : 0;
    }
    v.alloc_retries += retries;
  }
  return v;
}

bool torch_fragmented(const recorder::TorchDeviceMemory& d, recorder::TorchMoment when) { return fragmented(d, when); }

}  // namespace cudashim::policy
