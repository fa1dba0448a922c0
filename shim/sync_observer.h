// sync_observer.h: what a blocking call, a copy, an allocation or a free tells
// about the program's synchronization habits, noted at its call site.
#pragma once
#include <atomic>
#include <cstdint>

#include "catalog/hooks.h"
#include "shim/cuda_abi.h"
#include "recorder/callsites.h"
#include "recorder/recorder.h"
#include "shim/thread_flags.h"

namespace cudashim::shim {

// Facts a wrapper knows about one call (from its REC expressions).
struct CallFacts {
  uint64_t bytes = 0;
  CopyDir dir = CopyDir::UNKNOWN;
  const void* host = nullptr;  // host side of a copy, to tell pinned from pageable
  uint64_t cpu0 = 0;           // thread CPU ns at the start, when this call is sampled (else 0)
  uint64_t t0 = 0;             // the wrapper's clock reading at the start (timed calls)
  MemKind mem_kind = MemKind::device;  // allocations: what was allocated, under which key
  unsigned long long key = 0;
  uint64_t blocked_ticks = 0;  // the pool's rows: ticks spent in the driver's blocking calls
};

// The runtime's allocation calls, whose driver allocation happens under them.
constexpr bool runtime_alloc_row(HookId id) { return hook_info(id).has(ROLE_RUNTIME_ALLOC); }

// An allocation made by a driver call inside another hooked call (cudaMalloc over
// cuMemAlloc_v2): its ledger entry gets the outer call's site (observe()). Two TLS stores.
inline void note_inner_alloc(const CallFacts& f) {
  if (f.key == 0) return;
  g_flags.inner_alloc_key = f.key;
  g_flags.inner_alloc_kind = static_cast<uint8_t>(f.mem_kind);
}

// Counts one call at its call site (native return address and, in CPython, the
// calling Python line) and the evidence of the sync patterns it shows. Called at
// the outermost hook only. Cheap after a site's first hit: a hash probe and a few
// relaxed atomic adds; CPython processes also read the current frame and line.
// Records only: whether the site is a finding is judged off the caller's thread
// (judge_pending_sites).
void observe(HookId id, const void* return_address, uint64_t ticks, const CallFacts& facts);

// Judges site `s` once, at clock `now` when that finds it in the steady-state loop so far,
// and announces it (a log line and a stream event) when that makes it a finding. Off the
// hooks' path: the flush thread, the exit, the wait sampler's thread.
void judge_site(recorder::CallSite& s, uint64_t now);

// Judges every site not judged yet, each at its latest hit, and writes the legacy-stream
// line when it is due: the flush thread's tick (recorder::stream_add_tick), and once more at
// exit before the findings summary, so that no judgment is left pending.
void judge_pending_sites();

// Call sites on or off at run time (cudashim_set_call_sites): 1 on, 0 off, -1 as the
// policy says. Returns whether they were on before.
bool set_call_sites(int on);

// Returns the thread CPU time in ns when this blocking call is one of the sampled
// ones (every 256th outermost one per thread), else 0. Samples tell spinning from sleeping.
uint64_t maybe_sample_cpu(recorder::CallScope& scope);

// A stream was created with `flags` (CU_STREAM_DEFAULT streams are blocking).
void note_stream_created(unsigned int flags, CUstream stream);

extern std::atomic<uint32_t> g_blocking_stream_count;
extern std::atomic<CUstream> g_blocking_streams[64];

// Counts a launch on a blocking stream; marks the legacy-stream finding due (once) when this
// thread uses both that and the legacy default stream past warm-up: judge_pending_sites says it.
void note_blocking_stream_launch(recorder::ThreadState& ts);

// True when `stream` is one of the (first 64) blocking streams created. Launch
// path: nothing to scan while the program created none.
inline bool is_blocking_stream(CUstream stream) {
  const uint32_t n = g_blocking_stream_count.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < n && i < 64; ++i)
    if (g_blocking_streams[i].load(std::memory_order_relaxed) == stream) return true;
  return false;
}

// A context was created or the primary context's flags set: note deprecated flags.
void note_context_flags(HookId id, unsigned int flags);

}  // namespace cudashim::shim
