// gpu_busy_union.h: GPU busy time from the precise mode's intervals (recorder/gpu_intervals.h):
// the union of the [start, end) intervals of a device's kernels, copies and memsets, so that
// overlapping work on several streams counts once, over the run and over the steady state; per
// context too; the kernel count and the share of kernels shorter than a launch's host cost
// (evidence for launch-bound). docs/gpu-time.md says what it measures and its error.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "recorder/gpu_intervals.h"

namespace cudashim::policy {

// A window's busy time. busy_ns <= to_ns - from_ns.
struct PreciseWindow {
  uint64_t from_ns = 0, to_ns = 0;  // monotonic
  uint64_t busy_ns = 0;
  double busy() const { return to_ns > from_ns ? static_cast<double>(busy_ns) / static_cast<double>(to_ns - from_ns) : 0; }
};

struct PreciseContext {
  uint32_t context = 0;
  PreciseWindow run;
};

struct PreciseDeviceTime {
  int device = -1;
  PreciseWindow run;     // first CUDA call to the report
  PreciseWindow steady;  // the host's loop when given, else after the first fifth of the span of the work, to its end
  uint64_t kernels = 0, short_kernels = 0, copies = 0, memsets = 0;
  uint64_t kernel_ns = 0;  // the sum of the kernels' own durations
  std::vector<PreciseContext> contexts;
  double short_share() const { return kernels ? static_cast<double>(short_kernels) / static_cast<double>(kernels) : 0; }
};

// The union of [start, end) over `spans`, clipped to [from, to). Sorts `spans`.
uint64_t busy_union_ns(std::vector<std::pair<uint64_t, uint64_t>>& spans, uint64_t from, uint64_t to);

// The steady window, one rule for NVML's samples and CUPTI's intervals: the host's loop
// [loop_from, loop_to] clipped to the run [start, end] when loop_to > loop_from, else from the
// first fifth of the work's span [first, last] to its end.
struct SteadyWindow {
  uint64_t from, to;
};
SteadyWindow steady_window(uint64_t first, uint64_t last, uint64_t loop_from, uint64_t loop_to, uint64_t start,
                           uint64_t end);

// Each device's precise busy time between start_ns and end_ns (monotonic); a kernel shorter
// than short_ns counts as short. Devices by ordinal. The steady window is [loop_from_ns,
// loop_to_ns) when loop_to_ns > loop_from_ns (the host's loop, as for NVML's figures).
std::vector<PreciseDeviceTime> precise_time(const std::vector<recorder::GpuInterval>& intervals, uint64_t start_ns,
                                            uint64_t end_ns, uint64_t short_ns, uint64_t loop_from_ns = 0,
                                            uint64_t loop_to_ns = 0);

}  // namespace cudashim::policy
