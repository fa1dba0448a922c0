// fragmentation.h: what PyTorch's allocator counters (recorder/torch_memory.h) say about
// the device memory the process holds: the fragmentation findings, and the verdicts the
// report's "torch_memory" section shows (report/sections/torch_memory.cpp).
#pragma once
#include <cstdint>

#include "recorder/torch_memory.h"

namespace cudashim::policy {

// A snapshot is "fragmented" when torch held, reserved but unallocated, at least this
// many bytes and at least this share of what it reserved: at the out-of-memory (after
// torch flushed its cache, so what is left is split blocks); at exit, in the free parts
// of segments partly in use (inactive_split_bytes), now or at their peak.
inline constexpr uint64_t kFragMinBytes = 256ull << 20;
inline constexpr double kFragMinShare = 0.20;

// Fragmentation costs a run only when memory runs short: a fragmented device is a warning when
// it ran out (an OOM snapshot, or torch retried an allocation) or when torch's peak reserved
// reached this share of the device's memory (NVML's total, recorder/gpu_samples.h), or when
// that total is unknown; otherwise it is info. The transformers Trainer of the H200 corpus:
// 346 MiB of split remainders at peak, 26 % of a 1.3 GiB peak reserved, on a 141 GiB device.
inline constexpr double kFragPressureShare = 0.50;
// The fix of an alloc.fragmentation that is info for that reason.
inline constexpr const char* kFragNoPressureFix =
    "nothing to do for this run: no allocation ran short (no out-of-memory, no retry) and torch's peak reserved "
    "stayed under half the device's memory; if the job grows, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
    "returns the split remainders";

struct TorchVerdicts {
  uint64_t fragmented_devices = 0;      // alloc.fragmentation
  uint64_t fragmented_under_pressure = 0;  // of them, those where it could cost the run (above)
  uint64_t alloc_retries = 0;           // alloc.torch-retries: num_alloc_retries, all devices
};
TorchVerdicts torch_verdicts();

// Whether one device's row of a snapshot taken at `when` is fragmented (the thresholds
// above): the row's "fragmented" in the report's "torch_memory" section.
bool torch_fragmented(const recorder::TorchDeviceMemory& d, recorder::TorchMoment when);

}  // namespace cudashim::policy
