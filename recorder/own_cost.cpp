// own_cost.cpp: cudashim's own CPU time and its hooks' estimated time (recorder/own_cost.h).
#include "recorder/own_cost.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "catalog/hooks.h"

namespace cudashim::recorder {
namespace {

constexpr int kOwnThreads = 16;  // cudashim starts two; a few more survive forks and restarts
constinit std::atomic<int> g_tids[kOwnThreads] = {};
constinit std::atomic<uint64_t> g_ended_ns{0};

// The flush thread's parts and rounds (own_part_add, own_round_add): written by that thread
// only, read by the report's writer; relaxed atomics, a reader may see a run half added.
struct PartSlot {
  std::atomic<const char*> name{nullptr};
  std::atomic<uint64_t> cpu_ns{0}, runs{0}, max_ns{0}, wall_ns{0};
};
constinit PartSlot g_parts[kOwnParts];
struct RoundSlot {
  std::atomic<uint64_t> cpu_ns{0}, wall_ns{0};
};
constinit RoundSlot g_rounds[kOwnRounds];
constinit std::atomic<uint64_t> g_nrounds{0};
constinit std::atomic<uint64_t> g_flush_total_ns{0};

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
  for (PartSlot& p : g_parts) {
    p.name.store(nullptr, std::memory_order_relaxed);
    p.cpu_ns.store(0, std::memory_order_relaxed), p.runs.store(0, std::memory_order_relaxed);
    p.max_ns.store(0, std::memory_order_relaxed), p.wall_ns.store(0, std::memory_order_relaxed);
  }
  g_nrounds.store(0, std::memory_order_relaxed);
  g_flush_total_ns.store(0, std::memory_order_relaxed);
}

uint64_t own_thread_cpu_ns() { return read_clock(CLOCK_THREAD_CPUTIME_ID); }

void own_part_add(int part, const char* name, uint64_t cpu_ns, uint64_t wall_ns) {
  if (part < 0 || part >= kOwnParts) return;
  PartSlot& p = g_parts[part];
  p.name.store(name, std::memory_order_relaxed);
  p.cpu_ns.fetch_add(cpu_ns, std::memory_order_relaxed);
  p.runs.fetch_add(1, std::memory_order_relaxed);
  p.wall_ns.fetch_add(wall_ns, std::memory_order_relaxed);
  if (cpu_ns > p.max_ns.load(std::memory_order_relaxed)) p.max_ns.store(cpu_ns, std::memory_order_relaxed);
}

int own_parts(OwnPart* out) {
  int n = 0;
  for (const PartSlot& p : g_parts) {
    const char* name = p.name.load(std::memory_order_relaxed);
    if (name == nullptr) continue;
    out[n++] = {name, p.cpu_ns.load(std::memory_order_relaxed), p.runs.load(std::memory_order_relaxed),
                p.max_ns.load(std::memory_order_relaxed), p.wall_ns.load(std::memory_order_relaxed)};
  }
  return n;
}

void own_round_add(uint64_t cpu_ns, uint64_t wall_ns, uint64_t flush_total_ns) {
  const uint64_t n = g_nrounds.load(std::memory_order_relaxed);
  RoundSlot& r = g_rounds[n % kOwnRounds];
  r.cpu_ns.store(cpu_ns, std::memory_order_relaxed);
  r.wall_ns.store(wall_ns, std::memory_order_relaxed);
  g_flush_total_ns.store(flush_total_ns, std::memory_order_relaxed);
  g_nrounds.store(n + 1, std::memory_order_release);
}

namespace {

// The median of the kept rounds' CPU over wall, percent; 0 with no round.
double median_round_pct(uint64_t* rounds) {
  const uint64_t n = std::min<uint64_t>(g_nrounds.load(std::memory_order_acquire), kOwnRounds);
  double shares[kOwnRounds];
  int k = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t wall = g_rounds[i].wall_ns.load(std::memory_order_relaxed);
    if (wall > 0) shares[k++] = 100.0 * static_cast<double>(g_rounds[i].cpu_ns.load(std::memory_order_relaxed)) / static_cast<double>(wall);
  }
  *rounds = static_cast<uint64_t>(k);
  if (k == 0) return 0.0;
  std::sort(shares, shares + k);
  return k % 2 ? shares[k / 2] : (shares[k / 2 - 1] + shares[k / 2]) / 2;
}

}  // namespace

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
  // Steady: the flush thread's median round, and the rest (its other threads, the hooks) as
  // they are. Without a round the flush thread's time so far counts whole.
  c.flush_cpu_ns = std::min(g_flush_total_ns.load(std::memory_order_relaxed), c.threads_cpu_ns);
  c.steady.flush_pct = median_round_pct(&c.steady.rounds);
  const uint64_t rest = c.steady.rounds ? c.threads_cpu_ns - c.flush_cpu_ns + c.hooks_ns : c.threads_cpu_ns + c.hooks_ns;
  c.steady.share_of_wall_pct = c.steady.flush_pct + (wall_ns ? 100.0 * static_cast<double>(rest) / static_cast<double>(wall_ns) : 0.0);
  return c;
}

}  // namespace cudashim::recorder
