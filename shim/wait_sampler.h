// wait_sampler.h: the Python line a program waits at while a thread with no Python frame reads
// back from the device for it (issue 19; docs/python.md, "Syncs on threads with no Python frame").
//
// jax.device_get(loss) in a loop: the main thread asks XLA for the value and sleeps; one of XLA's
// own threads, which never ran Python, copies the 4 bytes to the host (cuMemcpyDtoHAsync), and
// XLA wakes the main thread when they have arrived. The copy's call site has no Python line, so
// the read-back would be XLA's (info). Attributing it at the hook is not possible without system
// calls or unsafe reads of another thread's frames, so it is sampled off the hooks' path, the way
// py-spy samples from outside:
//  - The hook (shim/on_call.h, note_copy_start and note_copy_return) marks the start and the
//    return of each host-device copy of a thread with no Python frame in a process with CPython
//    (shim/sync_observer.cpp sets g_flags.frameless_copier at the thread's copies): the copy's
//    number and whether it was a read-back (small, device-to-host), and, in the thread's own
//    slot, that it is inside a copy. A few plain atomic stores.
//  - The flush thread starts the sampler's thread once marks keep coming (more than the warm-up);
//    it leaves after 2 s without a new read-back, and the next tick starts it again when they return.
//  - Every millisecond, at most once per 4 ms, when the main thread sleeps
//    (/proc/self/task/<pid>/stat: S or D, what py-spy's --idle reads), the sampler reads the
//    main thread's Python location and frames (shim/python_stack.h, read_main_thread: under the
//    GIL, through process_vm_readv). What ends that sleep decides the sample: a read-back in
//    flight (into pageable memory the wait is inside the call) counts it; another copy in flight
//    (the next batch's, which the dispatch waits for) drops it; with none in flight the first
//    copy started after it decides: a read-back counts it (on the H200 XLA issues the read-back
//    only once the step's kernels are done, so most of jax.device_get's wait comes before the
//    copy), the batch's copy drops it (the next step's dispatch). A counted sample is one hit at
//    the waiter's site of that line (recorder::sampled_site_for): the read-back's API and native
//    frames, the main thread's Python frames.
//  - A sample starts a new visit (the steps of policy::in_steady_loop) when the main thread made
//    hooked calls since the site's previous sample: a loop's read-back is one visit per step,
//    while XLA's autotuning during a compile, with the main thread asleep in one call, is one.
// Such a site is a sync.scalar-readback (policy::classify_site) at the user's line, with no
// blocked time: only the samples are counted (the report says "sampled"). A line that holds
// under a fifth of the read-back's visits (steps) is no finding (policy::waiter_is_finding): a line
// whose sleeps end in a read-back only by chance, not the wait.
#pragma once
#include <atomic>
#include <cstdint>

#include "recorder/callsites.h"
#include "recorder/thread_slots.h"

namespace cudashim::shim {

struct ReadbackMark {
  std::atomic<uint64_t> copies{0};     // host-device copies begun by threads with no Python frame (a lost bump merges two)
  std::atomic<uint64_t> readbacks{0};  // those that were small device-to-host ones
  std::atomic<uint8_t> kind[64] = {};  // kind[n % 64]: 1 when copy number n was a read-back, else 0
  std::atomic<const recorder::CallSite*> site{nullptr};  // the call site of the latest read-back that returned
};
extern ReadbackMark g_readback_mark;

// The start of a host-device copy by a thread with no Python frame (g_flags.frameless_copier),
// a read-back or not, on that thread's `slot`: the hook's part, before the real call
// (shim/on_call.h). Marked at the start and the return (note_copy_return): a copy from or to
// pageable memory returns only when it is done, so a wait for it lies inside the call.
// Plain atomic stores (a lost update between two such threads merges two copies, no more).
inline void note_copy_start(recorder::ThreadSlot& slot, bool readback) {
  ReadbackMark& m = g_readback_mark;
  const uint64_t n = m.copies.load(std::memory_order_relaxed) + 1;
  m.kind[n % 64].store(readback ? 1 : 0, std::memory_order_relaxed);
  if (readback) m.readbacks.store(m.readbacks.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  slot.copy_in_flight.store(readback ? 2 : 1, std::memory_order_relaxed);
  m.copies.store(n, std::memory_order_release);
}

// That copy returned, at `site` (shim/sync_observer.cpp); a read-back's site is the one the
// next samples are counted for.
inline void note_copy_return(recorder::ThreadSlot& slot, const recorder::CallSite* site, bool readback) {
  slot.copy_in_flight.store(0, std::memory_order_relaxed);
  if (readback) g_readback_mark.site.store(site, std::memory_order_release);
}

// The flush thread's tick (recorder::stream_add_tick): starts the sampler's thread when marks
// keep coming and it is not running.
void wait_sampler_tick();

// A forked child: the parent's sampler thread is not in it.
void wait_sampler_after_fork();

}  // namespace cudashim::shim
