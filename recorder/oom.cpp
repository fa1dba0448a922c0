// oom.cpp: out-of-memory bookkeeping.
#include "recorder/oom.h"

#include <mutex>

namespace cudashim::recorder {
namespace {
std::atomic<uint64_t> g_count{0}, g_denied{0};
// The last event is copied under a spinlock: OOMs are rare and never on a hot path.
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;
OomEvent g_last{};
}  // namespace

void record_oom(const OomEvent& e) {
  g_count.fetch_add(1, std::memory_order_relaxed);
  if (e.denied_by_policy) g_denied.fetch_add(1, std::memory_order_relaxed);
  while (g_lock.test_and_set(std::memory_order_acquire)) {
  }
  g_last = e;
  g_lock.clear(std::memory_order_release);
}

OomSummary oom_summary() {
  OomSummary s{g_count.load(std::memory_order_relaxed), g_denied.load(std::memory_order_relaxed), {}};
  while (g_lock.test_and_set(std::memory_order_acquire)) {
  }
  s.last = g_last;
  g_lock.clear(std::memory_order_release);
  return s;
}

void oom_reset() {
  g_count = 0;
  g_denied = 0;
  g_last = OomEvent{};
  g_lock.clear();
}

}  // namespace cudashim::recorder
