// drain_idle.h: the GPU idle a sync causes, seen from the host. A call that drains the
// queue (a blocking sync, a blocking device-to-host copy) leaves a mark on its thread: its
// site and the clock at its return, which its wrapper read anyway. The thread's next
// submitted work (a launch, a copy, a memset) reads the clock once more, adds the gap to
// that site (recorder::site_idle_after) and clears the mark. Without a mark a launch pays
// one TLS load and a compare: no lock, no allocation, no syscall (docs/gpu-time.md says
// what this does not see: another thread's or process's work, launch latency, a sync that
// found the queue already empty).
//
// Per thread rather than per device: a launch does not know its device or context without
// a driver call, and a training loop syncs and launches on the same thread.
#pragma once
#include <cstdint>

#include "catalog/hooks.h"
#include "recorder/callsites.h"
#include "recorder/clock.h"
#include "shim/thread_flags.h"

namespace cudashim::shim {

// True for the calls whose return means the queue they waited on is empty: blocking
// syncs (device, stream, event) and blocking device-to-host copies (a read-back).
constexpr bool drains_queue(const HookInfo& h, CopyDir dir) {
  return h.timing == Timing::BLOCKING &&
         (h.family == Family::sync || (h.kind == RecKind::COPY && dir == CopyDir::D2H));
}

// A call at `site` drained the queue and returned at `returned_at` (ticks). The first drain
// keeps the mark: a second sync before any work found nothing to wait for.
inline void note_drained(recorder::CallSite* site, uint64_t returned_at) {
  ThreadFlags& f = g_flags;
  if (f.drained_site != nullptr) return;
  f.drained_at = returned_at;
  f.drained_site = site;
}

// This thread submits work now (before the real launch or copy): the idle since a pending
// drain ends here. `now` is the wrapper's own clock reading when it has one, else 0.
[[gnu::always_inline]] inline void end_drained_idle(uint64_t now) {
  ThreadFlags& f = g_flags;
  if (__builtin_expect(f.drained_site == nullptr, 1)) return;
  if (now == 0) now = now_ticks();
  auto* site = static_cast<recorder::CallSite*>(f.drained_site);
  f.drained_site = nullptr;
  recorder::site_idle_after(site, now > f.drained_at ? now - f.drained_at : 0);
}

}  // namespace cudashim::shim
