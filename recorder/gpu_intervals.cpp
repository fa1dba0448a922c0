// gpu_intervals.cpp: see gpu_intervals.h.
#include "recorder/gpu_intervals.h"

#include <atomic>

namespace cudashim::recorder {
namespace {

GpuInterval g_items[kMaxGpuIntervals];
std::atomic<uint8_t> g_ready[kMaxGpuIntervals];
std::atomic<size_t> g_reserved{0};
std::atomic<uint64_t> g_dropped{0};
PreciseState g_state;
std::atomic<int> g_published{0};  // g_state was written (release after the copy)

}  // namespace

void precise_set_state(const PreciseState& s) {
  g_state = s;
  g_published.store(1, std::memory_order_release);
}

void precise_record(const GpuInterval& g) {
  const size_t k = g_reserved.fetch_add(1, std::memory_order_relaxed);
  if (k >= kMaxGpuIntervals) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  g_items[k] = g;
  g_ready[k].store(1, std::memory_order_release);
}

PreciseState precise_state() {
  if (g_published.load(std::memory_order_acquire) == 0) return {};
  return g_state;
}

std::vector<GpuInterval> precise_intervals() {
  size_t n = g_reserved.load(std::memory_order_acquire);
  if (n > kMaxGpuIntervals) n = kMaxGpuIntervals;
  std::vector<GpuInterval> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i)
    if (g_ready[i].load(std::memory_order_acquire)) out.push_back(g_items[i]);
  return out;
}

uint64_t precise_dropped() { return g_dropped.load(std::memory_order_relaxed); }

void precise_reset() {
  const size_t n = g_reserved.load();
  for (size_t i = 0; i < n && i < kMaxGpuIntervals; ++i) g_ready[i].store(0);
  g_reserved.store(0);
  g_dropped.store(0);
  g_published.store(0);
}

}  // namespace cudashim::recorder
