// wait_sampler.h: the Python line a program waits at while a thread with no Python frame reads
// back from the device for it (issue 19; docs/python.md, "Syncs on threads with no Python frame").
//
// jax.device_get(loss) in a loop: the main thread asks XLA for the value and sleeps; one of XLA's
// own threads, which never ran Python, copies the 4 bytes to the host (cuMemcpyDtoHAsync), and
// XLA wakes the main thread when they have arrived. The copy's call site has no Python line, so
// the read-back would be XLA's (info). Attributing it at the hook is not possible without system
// calls or unsafe reads of another thread's frames, so it is sampled off the hooks' path, the way
// py-spy samples from outside:
//  - The hook (shim/sync_observer.cpp) stores a mark at each host-device copy of a thread with
//    no Python frame in a process with CPython, and notes which were read-backs (small,
//    device-to-host). A few plain atomic stores.
//  - The flush thread starts the sampler's thread once marks keep coming (more than the warm-up);
//    it leaves after 2 s without a new one, and the next tick starts it again when they return.
//  - Every millisecond the sampler looks at the mark. At a new read-back that is still the latest
//    such copy (after it, XLA's next transfer, the next step's batch, means the main thread has
//    moved on: on the H200 most samples otherwise named the next step's dispatch line), when the main thread sleeps
//    (/proc/self/task/<pid>/stat: S or D, what py-spy's --idle reads), it reads the main thread's
//    Python location (shim/python_stack.h, read_main_thread: under the GIL, through
//    process_vm_readv) and counts one sample at the waiter's site of that line
//    (recorder::sampled_site_for): the read-back's API and native frames, the main thread's
//    Python frames. At most one sample per 4 ms.
//  - A sample starts a new visit (the steps of policy::in_steady_loop) when the main thread made
//    hooked calls since the site's previous sample: a loop's read-back is one visit per step,
//    while XLA's autotuning during a compile, with the main thread asleep in one call, is one.
// Such a site is a sync.scalar-readback (policy::classify_site) at the user's line, with no
// blocked time: only the samples are counted (the report says "sampled").
#pragma once
#include <atomic>
#include <cstdint>

#include "recorder/callsites.h"

namespace cudashim::shim {

struct ReadbackMark {
  std::atomic<uint64_t> copies{0};     // host-device copies by threads with no Python frame (a lost bump merges two)
  std::atomic<uint64_t> readbacks{0};  // those that were small device-to-host ones
  std::atomic<uint64_t> readback_copy{0};  // `copies` after the latest read-back: while it is the latest copy,
                                           // what the main thread waits for may be it
  std::atomic<const recorder::CallSite*> site{nullptr};  // the latest read-back's call site
};
extern ReadbackMark g_readback_mark;

// A host-device copy at `site` by a thread with no Python frame, a read-back or not: the hook's
// part. Plain atomic stores (a lost update between two such threads loses a sample, no more).
inline void note_frameless_copy(const recorder::CallSite* site, bool readback) {
  ReadbackMark& m = g_readback_mark;
  const uint64_t n = m.copies.load(std::memory_order_relaxed) + 1;
  if (readback) {
    m.site.store(site, std::memory_order_relaxed);
    m.readback_copy.store(n, std::memory_order_relaxed);
    m.readbacks.store(m.readbacks.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  m.copies.store(n, std::memory_order_release);
}

// The flush thread's tick (recorder::stream_add_tick): starts the sampler's thread when marks
// keep coming and it is not running.
void wait_sampler_tick();

// A forked child: the parent's sampler thread is not in it.
void wait_sampler_after_fork();

}  // namespace cudashim::shim
