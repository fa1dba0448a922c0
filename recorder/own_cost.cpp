// own_cost.cpp: cudashim's own CPU time and its hooks' estimated time (recorder/own_cost.h).
#include "recorder/own_cost.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "catalog/hooks.h"

namespace cudashim::recorder {
namespace {

constexpr int kOwnThreads = 16;  // cudashim starts two; a few more survive forks and restarts
constinit std::atomic<int> g_tids[kOwnThreads] = {};
constinit std::atomic<uint64_t> g_ended_ns{0};

uint64_t read_clock(clockid_t id) {
  timespec ts{};
  if (clock_gettime(id, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The per-thread CPU clock of thread `tid` of this process (what pthread_getcpuclockid returns:
// the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
clockid_t thread_clock(int tid) { return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u); }

int this_tid() { return static_cast<int>(syscall(SYS_gettid)); }

}  // namespace

void own_thread_begin() {
  const int tid = this_tid();
  for (auto& slot : g_tids) {
    int empty = 0;
    if (slot.compare_exchange_strong(empty, tid, std::memory_order_acq_rel)) return;
  }
}

void own_thread_end() {
  const int tid = this_tid();
  for (auto& slot : g_tids) {
    int mine = tid;
    if (slot.load(std::memory_order_acquire) == tid) {
      // Its time moves to the ended total first, then the slot is freed: a reader in between
      // counts it twice for an instant, never loses it.
      g_ended_ns.fetch_add(read_clock(CLOCK_THREAD_CPUTIME_ID), std::memory_order_acq_rel);
      slot.compare_exchange_strong(mine, 0, std::memory_order_acq_rel);
      return;
    }
  }
  g_ended_ns.fetch_add(read_clock(CLOCK_THREAD_CPUTIME_ID), std::memory_order_acq_rel);
}

uint64_t own_threads_cpu_ns() {
  uint64_t ns = g_ended_ns.load(std::memory_order_acquire);
  for (const auto& slot : g_tids)
    if (const int tid = slot.load(std::memory_order_acquire); tid != 0) ns += read_clock(thread_clock(tid));
  return ns;
}

void own_threads_reset() {
  for (auto& slot : g_tids) slot.store(0, std::memory_order_relaxed);
  g_ended_ns.store(0, std::memory_order_relaxed);
}

double OwnCost::share_of_cpu_pct() const {
  return process_cpu_ns == 0 ? 0.0 : 100.0 * static_cast<double>(threads_cpu_ns + hooks_ns) / static_cast<double>(process_cpu_ns);
}

double OwnCost::share_of_wall_pct() const {
  return wall_ns == 0 ? 0.0 : 100.0 * static_cast<double>(threads_cpu_ns + hooks_ns) / static_cast<double>(wall_ns);
}

OwnCost own_cost(const CounterTotals& t, uint64_t wall_ns, bool python) {
  OwnCost c;
  c.threads_cpu_ns = own_threads_cpu_ns();
  for (size_t h = 0; h < kHookCount; ++h) {
    // A call made inside another hooked call (the runtime's cuStreamSynchronize under
    // cudaStreamSynchronize) passes a hook too: each is counted.
    const uint64_t calls = t.calls[h];
    if (calls == 0) continue;
    const HookInfo& info = kHooks[h];
    uint64_t per = kHookPassNs;
    if (info.kind == RecKind::ALLOC || info.kind == RecKind::FREE) per = kHookMemoryNs;
    else if (info.timing != Timing::NONE) per = kHookTimedNs + (python ? kHookPythonFrameNs : 0);
    c.hook_calls += calls;
    c.hooks_ns += calls * per;
  }
  c.process_cpu_ns = read_clock(CLOCK_PROCESS_CPUTIME_ID);
  c.wall_ns = wall_ns;
  return c;
}

}  // namespace cudashim::recorder
