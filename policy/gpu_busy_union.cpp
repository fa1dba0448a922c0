// gpu_busy_union.cpp: see gpu_busy_union.h.
#include "policy/gpu_busy_union.h"

#include <algorithm>

namespace cudashim::policy {

uint64_t busy_union_ns(std::vector<std::pair<uint64_t, uint64_t>>& spans, uint64_t from, uint64_t to) {
  std::sort(spans.begin(), spans.end());
  uint64_t busy = 0, cur_start = 0, cur_end = 0;
  bool open = false;
  for (auto [s, e] : spans) {
    s = std::max(s, from), e = std::min(e, to);
    if (e <= s) continue;
    if (open && s <= cur_end) {
      cur_end = std::max(cur_end, e);
      continue;
    }
    if (open) busy += cur_end - cur_start;
    cur_start = s, cur_end = e, open = true;
  }
  if (open) busy += cur_end - cur_start;
  return busy;
}

SteadyWindow steady_window(uint64_t first, uint64_t last, uint64_t loop_from, uint64_t loop_to, uint64_t start,
                           uint64_t end) {
  if (loop_to > loop_from) return {std::max(loop_from, start), std::min(loop_to, end)};
  return {first + (last - first) / 5, last};
}

std::vector<PreciseDeviceTime> precise_time(const std::vector<recorder::GpuInterval>& intervals, uint64_t start_ns,
                                            uint64_t end_ns, uint64_t short_ns, uint64_t loop_from_ns,
                                            uint64_t loop_to_ns) {
  std::vector<int> devices;
  for (const auto& g : intervals)
    if (std::find(devices.begin(), devices.end(), g.device) == devices.end()) devices.push_back(g.device);
  std::sort(devices.begin(), devices.end());
  std::vector<PreciseDeviceTime> out;
  for (int dev : devices) {
    PreciseDeviceTime d;
    d.device = dev;
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    std::vector<uint32_t> contexts;
    uint64_t first = 0, last = 0;
    for (const auto& g : intervals) {
      if (g.device != dev || g.end_ns <= g.start_ns || g.end_ns <= start_ns || g.start_ns >= end_ns) continue;
      spans.emplace_back(g.start_ns, g.end_ns);
      first = first ? std::min(first, g.start_ns) : g.start_ns;
      last = std::max(last, g.end_ns);
      if (std::find(contexts.begin(), contexts.end(), g.context) == contexts.end()) contexts.push_back(g.context);
      switch (g.kind) {
        case recorder::GpuInterval::kKernel:
          ++d.kernels, d.kernel_ns += g.end_ns - g.start_ns;
          if (g.end_ns - g.start_ns < short_ns) ++d.short_kernels;
          break;
        case recorder::GpuInterval::kCopy: ++d.copies; break;
        default: ++d.memsets; break;
      }
    }
    if (spans.empty()) continue;
    d.run = {start_ns, end_ns, busy_union_ns(spans, start_ns, end_ns)};
    const SteadyWindow w = steady_window(first, last, loop_from_ns, loop_to_ns, start_ns, end_ns);
    d.steady = {w.from, w.to, busy_union_ns(spans, w.from, w.to)};
    std::sort(contexts.begin(), contexts.end());
    if (contexts.size() > 1)
      for (uint32_t c : contexts) {
        std::vector<std::pair<uint64_t, uint64_t>> own;
        for (const auto& g : intervals)
          if (g.device == dev && g.context == c && g.end_ns > g.start_ns) own.emplace_back(g.start_ns, g.end_ns);
        d.contexts.push_back({c, {start_ns, end_ns, busy_union_ns(own, start_ns, end_ns)}});
      }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace cudashim::policy
