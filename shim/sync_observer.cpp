// sync_observer.cpp: call sites and the evidence of sync patterns.
#include "shim/sync_observer.h"

#include <fmt/format.h>
#include <time.h>

#include "catalog/findings.h"
#include "policy/host_framework.h"
#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/clock.h"
#include "recorder/event_stream.h"
#include "recorder/events.h"
#include "shim/drain_idle.h"
#include "shim/log.h"
#include "shim/python_stack.h"
#include "shim/resolve.h"
#include "shim/wait_sampler.h"

namespace cudashim::shim {
namespace {

using recorder::CallSite;
namespace rec = cudashim::recorder;

std::atomic<bool> g_python_looked{false};
// The legacy-stream finding, due for its one line (note_blocking_stream_launch -> judge_pending_sites).
std::atomic<bool> g_legacy_stream_due{false};

uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// True when `p` is page-locked host memory (pinned or registered), by asking the
// driver; pageable memory is unknown to it.
bool is_pinned(const void* p) {
  using GetAttr = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
  static std::atomic<GetAttr> fn{nullptr};
  GetAttr f = fn.load(std::memory_order_acquire);
  if (f == nullptr) {
    f = reinterpret_cast<GetAttr>(driver_function("cuPointerGetAttribute"));
    if (f == nullptr) return true;  // cannot tell: do not accuse
    fn.store(f, std::memory_order_release);
  }
  unsigned int type = 0;
  const CUresult r = f(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(p));
  return r == CUDA_SUCCESS && (type == CU_MEMORYTYPE_HOST || type == CU_MEMORYTYPE_UNIFIED);
}

// Whether an async copy's host side at `s` is pageable. The driver is asked for the first
// kHostKindChecks copies of a site only: when its answers agree (a line copies from one buffer
// kind, the usual case), the site is settled and a loop's later copies cost no driver call.
// A site whose answers differ stays unsettled and is asked every time. What this misses: a
// line that copies from pinned memory for its first kHostKindChecks copies and from pageable
// memory later (or the reverse) keeps its first verdict.
constexpr uint8_t kHostSawPinned = 1, kHostSawPageable = 2, kHostSettled = 4, kHostKindChecks = 8;
bool host_is_pageable(CallSite& s, const void* host) {
  const uint8_t kind = s.host_kind.load(std::memory_order_relaxed);
  if ((kind & kHostSettled) != 0) return (kind & kHostSawPageable) != 0;
  const bool pageable = !is_pinned(host);
  const uint8_t saw = pageable ? kHostSawPageable : kHostSawPinned;
  const uint8_t seen = static_cast<uint8_t>(s.host_kind.fetch_or(saw, std::memory_order_relaxed) | saw);
  const bool agree = (seen & (kHostSawPinned | kHostSawPageable)) != (kHostSawPinned | kHostSawPageable);
  if (s.host_kind_checks.fetch_add(1, std::memory_order_relaxed) + 1 >= kHostKindChecks && agree)
    s.host_kind.fetch_or(kHostSettled, std::memory_order_relaxed);
  return pageable;
}

// A warning row's line carries the site's price so far (policy::site_price, the GPU's idle from
// NVML's steady state when measured); below the warning floor (sync.warn_min_saving_us,
// sync.warn_min_step_share) it is an info line, below the default log level, as the report's
// finding will be (docs/findings.md, "What a finding costs").
void announce_priced(const CallSite& s, FindingId rule, const std::string& where, const char* api) {
  const FindingInfo& row = finding_info(rule);
  const policy::SitePrice p = policy::site_price(rule, s, policy::steady_gpu_idle_share());
  if (!p.priced) {
    log_message(LogLevel::warn, "[{}] {} at {} [{}]: {}", row.name, row.title, where, api, row.fix);
    return;
  }
  const std::string cost =
      p.step_ns ? fmt::format("blocked {:.3f} ms a step; fixing it would save about {:.3f} ms of a {:.3f} ms step ({:.1f}%)",
                              p.blocked_per_step_ns / 1e6, p.saving_per_step_ns / 1e6, p.step_ns / 1e6,
                              100.0 * static_cast<double>(p.saving_per_step_ns) / static_cast<double>(p.step_ns))
                : fmt::format("blocked {:.3f} ms a visit", p.blocked_per_step_ns / 1e6);
  if (policy::above_warning_floor(p.saving_per_step_ns, p.step_ns))
    log_message(LogLevel::warn, "[{}] {} at {} [{}] ({}): {}", row.name, row.title, where, api, cost, row.fix);
  else
    log_message(LogLevel::info, "[{}] {} at {} [{}] ({}): below the warning floor (sync.warn_min_saving_us, "
                "sync.warn_min_step_share)", row.name, row.title, where, api, cost);
}

// One warning line the first time a site becomes a finding (rate-limited by
// construction: once per site and rule).
void announce(const CallSite& s, FindingId rule) {
  static std::atomic<int> announced{0};
  if (announced.fetch_add(1, std::memory_order_relaxed) >= 50) return;
  const FindingInfo& row = finding_info(rule);
  rec::stream_event(rec::FindingEvent{row.name, hook_info(s.api).name, s.hits.load(std::memory_order_relaxed)});
  // The site as the report names it (policy::describe_site: the user's Python line, else the
  // first native frame outside the CUDA runtime), so the live line and the report agree. A site
  // inside a framework's own code (policy::site_framework) is nothing the user can change: an
  // info line, below the default log level.
  const std::string framework = policy::site_framework(s);
  // A waiter's site (shim/wait_sampler.h) counts samples of the main thread, not calls of its own.
  const std::string where = policy::describe_site(s) + (s.sampled ? " (sampled while the main thread waited for a read-back)" : "");
  const char* api = hook_info(s.api).name;
  if (!framework.empty())
    log_message(LogLevel::info, "[{}] {} at {} [{}]: {}", row.name, row.title, where, api,
                policy::framework_fix(framework));
  else if (row.severity == Severity::info)
    log_notice("[{}] {} at {} [{}]: {}", row.name, row.title, where, api, row.fix);
  else
    announce_priced(s, rule, where, api);
}

}  // namespace

uint64_t maybe_sample_cpu(recorder::CallScope& scope) {
  // Every 256th blocking call: CLOCK_THREAD_CPUTIME_ID is a real system call (~300 ns),
  // so sampling keeps its share of a timed sync under 2 ns (bench/results/hook_overhead-cpu.md).
  if (!scope.outermost() || (++g_flags.blocking_calls & 255) != 0) return 0;
  return thread_cpu_ns();
}

// cudashim_set_call_sites: -1 as the policy says, 0 off, 1 on. One relaxed load per call.
std::atomic<int> g_sites_override{-1};

bool set_call_sites(int on) {
  const int before = g_sites_override.exchange(on < 0 ? -1 : (on ? 1 : 0), std::memory_order_relaxed);
  return before < 0 ? policy::sync_thresholds().call_sites : before == 1;
}

namespace {

// What calls made under an outermost one left for it: the driver allocation under cudaMalloc
// (note_inner_alloc), and a free the pool took under cudaFree (shim/pool.cpp).
struct InnerNotes {
  uint64_t alloc_key = 0;
  bool pooled_free = false;
};

// Takes this thread's inner notes, so that nothing stale reaches a later call. Two TLS loads.
[[gnu::always_inline]] inline InnerNotes take_inner_notes(ThreadFlags& ts) {
  InnerNotes n{ts.inner_alloc_key, ts.pooled_free};
  if (__builtin_expect(n.alloc_key != 0, 0)) ts.inner_alloc_key = 0;
  if (__builtin_expect(n.pooled_free, 0)) ts.pooled_free = false;
  return n;
}

// True when call sites are on (cudashim_set_call_sites, else the policy). One relaxed load.
[[gnu::always_inline]] inline bool sites_on() {
  const int o = g_sites_override.load(std::memory_order_relaxed);
  return o == 1 || (o < 0 && policy::sync_thresholds().call_sites);
}

// The site of this hit (its Python location in `py`), counted: its place marks activity for
// every other site. nullptr when the table is full.
[[gnu::always_inline]] inline CallSite* hit_site(HookId id, const void* ra, uint64_t ticks, const CallFacts& f,
                                                 rec::PyLocation& py) {
  const HookInfo& info = hook_info(id);
  // An asynchronous copy or memset that stays on the device can never be a finding
  // (policy::classify_site), so its site is the native one only: reading the Python
  // stack is most of a site's cost (380 ns on the GPU host, gpu/results/...-run10) and
  // these are most of a transformer step's timed calls (~135 of 159).
  const bool device_async = info.kind == RecKind::COPY && info.timing == Timing::TIMED &&
                            (f.dir == CopyDir::D2D || f.dir == CopyDir::MEMSET);
  if (!device_async)
    if (rec::PyLocate locate = rec::g_py_locate.load(std::memory_order_relaxed)) locate(py);
  CallSite* s = rec::site_for(id, ra, py);
  if (s == nullptr) return nullptr;
  // A hit at another place than this thread's previous one is activity between the hits of
  // every other site: with launches, what tells a loop from a burst (policy::in_steady_loop).
  ThreadFlags& ts = g_flags;
  const uint64_t place = py.code != nullptr ? reinterpret_cast<uintptr_t>(py.code) ^
                                                  (py.ip != nullptr ? reinterpret_cast<uintptr_t>(py.ip) : static_cast<uint64_t>(py.line))
                                            : reinterpret_cast<uintptr_t>(ra);
  if (place != ts.last_place) {
    ts.last_place = place;
    ++ts.activity;
  }
  // The clock at this hit: the wrapper's own readings for a timed call, one read otherwise.
  const uint64_t now = f.t0 != 0 ? f.t0 + ticks : now_ticks();
  rec::site_hit(s, ticks, f.bytes, ts.activity, now);
  return s;
}

// The timeline (trace): timed calls only, from the wrapper's own clock read at the start.
[[gnu::always_inline]] inline void note_trace(HookId id, CallSite* s, uint64_t ticks, const CallFacts& f) {
  if (ticks == 0) return;
  rec::ThreadSlot& slot = *rec::g_tls.slot;
  const uint64_t n = slot.trace_next.load(std::memory_order_relaxed);
  slot.trace[n % rec::kTraceSize] = {f.t0, ticks, s, static_cast<uint16_t>(id)};
  slot.trace_next.store(n + 1, std::memory_order_release);
}

// What an allocation or a free tells its site: leaks are reported by call site (the ledger
// entry gets it), frees the pool took are counted, and so are the frees made between an
// out-of-memory of this thread and its next successful allocation (shim/oom_notice.h: an
// allocator's cache flush; only free sites look at that counter).
[[gnu::always_inline]] inline void note_memory(HookId id, CallSite* s, const CallFacts& f, const InnerNotes& inner) {
  ThreadFlags& ts = g_flags;
  if (f.key != 0) rec::ledger_attach_site(f.mem_kind, f.key, s);
  else if (inner.alloc_key != 0 && runtime_alloc_row(id))  // only a runtime allocation claims it (never a stale key)
    rec::ledger_attach_site(static_cast<MemKind>(ts.inner_alloc_kind), inner.alloc_key, s);
  if (inner.pooled_free) s->pooled.fetch_add(1, std::memory_order_relaxed);
  if (__builtin_expect(ts.oom_recovery, 0)) s->oom_flush.fetch_add(1, std::memory_order_relaxed);
}

// What a copy tells its site: a read-back pending for the next sync, the wait sampler's marks
// on a thread with no Python frame in a process with CPython (XLA's, serving jax.device_get:
// shim/wait_sampler.h), and an asynchronous copy's pageable host side.
[[gnu::always_inline]] inline void note_copy(const HookInfo& info, CallSite* s, const CallFacts& f, const rec::PyLocation& py) {
  ThreadFlags& ts = g_flags;
  const bool readback = policy::is_readback(f.dir, f.bytes);
  if (readback) ts.readback_pending = true;
  if (f.dir == CopyDir::D2H || f.dir == CopyDir::H2D) {
    if (ts.frameless_copier) note_copy_return(*rec::g_tls.slot, s, readback);  // its start was marked
    ts.frameless_copier = py.code == nullptr && rec::g_py_locate.load(std::memory_order_relaxed) != nullptr;
  }
  if (info.timing == Timing::TIMED && f.host != nullptr && (f.dir == CopyDir::H2D || f.dir == CopyDir::D2H) &&
      host_is_pageable(*s, f.host))
    s->pageable.fetch_add(1, std::memory_order_relaxed);
}

// A sync right after a read-back (.item()) is counted at the sync's site; any other call but a
// copy ends the pending read-back.
[[gnu::always_inline]] inline void note_readback_sync(const HookInfo& info, CallSite* s) {
  ThreadFlags& ts = g_flags;
  if (info.timing == Timing::BLOCKING && info.family == Family::sync && ts.readback_pending) {
    s->after_readback.fetch_add(1, std::memory_order_relaxed);
    ts.readback_pending = false;
  } else if (info.kind != RecKind::COPY) {
    ts.readback_pending = false;
  }
}

// A sampled blocking call's thread CPU time against its wall time (spinning or sleeping).
[[gnu::always_inline]] inline void note_cpu_sample(CallSite* s, uint64_t ticks, const CallFacts& f) {
  if (f.cpu0 == 0) return;
  s->cpu_samples.fetch_add(1, std::memory_order_relaxed);
  s->cpu_ns_sampled.fetch_add(thread_cpu_ns() - f.cpu0, std::memory_order_relaxed);
  s->wall_ticks_sampled.fetch_add(ticks, std::memory_order_relaxed);
}

}  // namespace

void observe(HookId id, const void* ra, uint64_t ticks, const CallFacts& f) {
  const InnerNotes inner = take_inner_notes(g_flags);  // taken even when sites are off
  if (!sites_on()) return;
  if (!g_python_looked.load(std::memory_order_relaxed)) {
    install_python_readers();
    g_python_looked.store(true, std::memory_order_relaxed);
  }
  rec::PyLocation py;
  CallSite* s = hit_site(id, ra, ticks, f, py);
  if (s == nullptr) return;
  const HookInfo& info = hook_info(id);
  note_trace(id, s, ticks, f);
  // A drain starts the sync-bound idle that the thread's next submitted work ends
  // (shim/drain_idle.h), from the wrapper's own clock read at the return.
  if (drains_queue(info, f.dir)) note_drained(s, f.t0 + ticks);
  note_memory(id, s, f, inner);
  if (info.kind == RecKind::COPY) note_copy(info, s, f, py);
  note_readback_sync(info, s);
  note_cpu_sample(s, ticks, f);
  // Whether the site is a finding is not decided here: judge_pending_sites() does it on the
  // flush thread (and once more at exit), from the site's counters.
}

void judge_site(CallSite& s, uint64_t now) {
  // A site is classified once, by the first look that finds it in the steady-state loop so far
  // (policy::steady_so_far: more visits than the warm-up, spread over sync.loop_share of the
  // CUDA-active window so far and over at least a second, so that no start-up burst is
  // announced; the report judges the whole run, policy::in_steady_loop) and its first hit's
  // capture finished (captured == 2, acquire: before that its api and stacks may still be
  // being written by that thread); it announces itself if that makes it a finding.
  if (!s.classified.load(std::memory_order_relaxed) && policy::steady_so_far(s, now) &&
      s.captured.load(std::memory_order_acquire) == 2 && !s.classified.exchange(true, std::memory_order_relaxed)) {
    const FindingId rule = policy::classify_site(s);
    if (rule != FindingId::none) announce(s, rule);
  }
}

void judge_pending_sites() {
  // At the clock of each site's latest hit: what the hit itself would have found (a site in
  // the loop so far at one of its hits is so at every later one: its visits and its share of
  // the window so far only grow), judged with the counters of now. A waiter's site is judged
  // by the wait sampler's thread, at its sample, once it holds its share (wait_sampler.cpp).
  // Nothing thrown here (a line's allocation) may end the flush thread or the exit: the job goes on.
  try {
    rec::for_each_site([](CallSite& s) {
      if (!s.sampled && !s.classified.load(std::memory_order_relaxed))
        judge_site(s, s.last_hit_ticks.load(std::memory_order_relaxed));
    });
    if (g_legacy_stream_due.exchange(false, std::memory_order_relaxed)) {
      const FindingInfo& row = finding_info(FindingId::legacy_stream);
      log_message(LogLevel::warn, "[{}] {}: {}", row.name, row.title, row.fix);
    }
  } catch (...) {
  }
}

std::atomic<uint32_t> g_blocking_stream_count{0};
std::atomic<CUstream> g_blocking_streams[64];

void note_stream_created(unsigned int flags, CUstream stream) {
  if ((flags & CU_STREAM_NON_BLOCKING) != 0) return;
  rec::count_event(rec::Event::blocking_streams_created);
  const uint32_t i = g_blocking_stream_count.load(std::memory_order_relaxed);
  if (i < 64) {
    g_blocking_streams[i].store(stream, std::memory_order_relaxed);
    g_blocking_stream_count.store(i + 1, std::memory_order_release);  // one creator at a time is enough here
  }
}

void note_blocking_stream_launch(rec::ThreadState& ts) {
  rec::bump(ts, ts.slot->blocking_stream_launches, 1);
  static std::atomic<bool> announced{false};
  const uint64_t warm = policy::sync_thresholds().warmup_hits;
  // Announced by the flush thread (judge_pending_sites): no line is written on the launch path.
  if (ts.slot->blocking_stream_launches.load(std::memory_order_relaxed) > warm &&
      ts.slot->legacy_stream_launches.load(std::memory_order_relaxed) > warm && !announced.exchange(true))
    g_legacy_stream_due.store(true, std::memory_order_relaxed);
}

void note_context_flags(HookId, unsigned int flags) {
  if ((flags & CU_CTX_BLOCKING_SYNC) == 0) return;
  if (rec::g_events[static_cast<int>(rec::Event::blocking_sync_flag)].fetch_add(1, std::memory_order_relaxed) == 0) {
    const FindingInfo& row = finding_info(FindingId::deprecated_api);
    log_notice("[{}] {}: {}", row.name, row.title, row.fix);
  }
}

}  // namespace cudashim::shim
