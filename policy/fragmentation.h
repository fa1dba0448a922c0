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

struct TorchVerdicts {
  uint64_t fragmented_devices = 0;  // alloc.fragmentation
  uint64_t alloc_retries = 0;       // alloc.torch-retries: num_alloc_retries, all devices
};
TorchVerdicts torch_verdicts();

// Whether one device's row of a snapshot taken at `when` is fragmented (the thresholds
// above): the row's "fragmented" in the report's "torch_memory" section.
bool torch_fragmented(const recorder::TorchDeviceMemory& d, recorder::TorchMoment when);

}  // namespace cudashim::policy
