// callsites.h: where blocking calls (and allocations) come from.
//
// A call site is (hooked ABI, native return address, Python code object, Python
// line, and the innermost Python code object when that is not the user's). Each gets one slot of a fixed lock-free table: counts and blocked ticks
// on every hit (two relaxed atomic adds), and, on the first hit only, a full
// native backtrace and the Python stack (copied as text, under the GIL). Later
// hits only count. Nothing allocates; the first hit of a site is the slow path.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

#include "catalog/hooks.h"

namespace cudashim::recorder {

inline constexpr int kMaxNativeFrames = 24;
inline constexpr int kMaxPyFrames = 6;

struct PyFrameText {
  char file[160] = {};
  char function[64] = {};
  int line = 0;
};

struct CallSite {
  std::atomic<uint64_t> key{0};  // 0 = empty slot
  HookId api{};
  const void* return_address = nullptr;
  const void* py_code = nullptr;  // identity of the innermost Python frame (never dereferenced later)
  int py_line = 0;
  std::atomic<uint64_t> hits;
  std::atomic<uint64_t> ticks;           // blocked/timed ticks summed over hits
  std::atomic<uint64_t> bytes;           // bytes (copies, allocations)
  std::atomic<uint64_t> first_hit_ticks;
  std::atomic<uint64_t> last_hit_ticks;  // the clock at the latest hit (the spread of its visits)
  std::atomic<uint64_t> visits;          // runs of hits: a hit starts one when its thread did other work
                                         // since the site's previous hit (a launch, a hit elsewhere)
  std::atomic<uint64_t> last_activity;   // the hitting thread's activity count at the latest hit
  // Pattern evidence, counted by the observer (shim/sync_observer.cpp):
  std::atomic<uint64_t> after_readback;   // syncs right after a small device-to-host copy (.item())
  std::atomic<uint64_t> pageable;         // async copies whose host side is pageable memory
  // What the driver said of this site's async copies' host side (shim/sync_observer.cpp:
  // host_is_pageable): bits kHostSawPinned, kHostSawPageable, kHostSettled, and how many times it
  // was asked. Once its first kHostKindChecks answers agree, the site is settled and the driver
  // is not asked again.
  std::atomic<uint8_t> host_kind;
  std::atomic<uint8_t> host_kind_checks;
  std::atomic<uint64_t> pooled;           // frees cudashim's pool took into its cache (no driver call)
  std::atomic<uint64_t> oom_flush;        // frees made between an out-of-memory and the next successful allocation
  std::atomic<uint64_t> cpu_samples;      // sampled blocking calls with thread CPU time read
  std::atomic<uint64_t> cpu_ns_sampled;   // thread CPU time inside those calls
  std::atomic<uint64_t> wall_ticks_sampled;  // wall ticks of those calls
  // Sync-bound GPU idle (shim/drain_idle.h): from the return of a call here that drained the
  // queue to the same thread's next submitted work (launch, copy, memset), and how many such gaps.
  std::atomic<uint64_t> idle_after_ticks;
  std::atomic<uint64_t> idle_after_count;
  std::atomic<int> captured;             // 0 no, 1 capturing, 2 done: the fields above and below
                                         // are readable once it is 2 (acquire)
  std::atomic<bool> classified;          // the observer judged it once (shim/sync_observer.cpp)
  // A waiter's site (shim/wait_sampler.h): no call of the program is counted here, but the main
  // thread seen waiting at this Python line while a thread with no Python frame read back a few
  // bytes from the device (XLA's threads serve jax.device_get). Each hit is one sample; its
  // native frames are the reading thread's, its Python frames the main thread's.
  bool sampled = false;
  const CallSite* reader = nullptr;        // a waiter's site: the read-back's site it was sampled for
  mutable std::atomic<uint64_t> waiter_visits;  // a read-back's site: the visits (steps) counted at all its waiters' sites
  // Captured at the first hit (shim/python_stack.cpp): a compile or autotuning frame lies
  // between the call and the user's frame (policy::warmup_frame_in): a warm-up burst, no loop.
  bool warmup = false;
  int native_depth = 0;
  void* native[kMaxNativeFrames] = {};
  int py_depth = 0;
  PyFrameText py[kMaxPyFrames] = {};
};

// The Python location of the calling thread (shim/python_stack.cpp): its innermost
// code object, and either the instruction pointer in it (3.12, 3.13) or the line.
struct PyLocation {
  const void* code = nullptr;
  const void* ip = nullptr;
  int line = 0;
  // The innermost Python frame's code object (the library function that made the call), when
  // it is not `code` (the user's frame): keyed too, so that a helper's or a compiler's sync at
  // the user's line is not one site with the same line's own (identity only, never read).
  const void* inner = nullptr;
};

// Returns the call site for this hit, creating it (and capturing its stacks) on
// first use; nullptr when the table is full. Then count it with site_hit().
CallSite* site_for(HookId api, const void* return_address, const PyLocation& py);

// The waiter's site of `py` (the main thread's Python location, its frames in `frames`) for a
// read-back made at `reader` by a thread with no Python frame, created on first use (its native
// frames copied from `reader`'s); nullptr when the table is full. Off the hooks' path: the wait
// sampler's thread (shim/wait_sampler.h) calls it, then counts each sample with site_hit().
CallSite* sampled_site_for(const CallSite& reader, const PyLocation& py, const PyFrameText* frames, int depth);

// Adds one hit of `ticks` and `bytes` to `site` at the clock reading `now`. `activity`: the
// hitting thread's count of launches and hits elsewhere (shim/thread_flags.h); when it moved
// since the site's previous hit, this hit starts a new visit (a step of a loop, not more of
// one burst). Relaxed: a race between two threads' hits can miscount one visit, no more.
inline void site_hit(CallSite* site, uint64_t ticks, uint64_t bytes, uint64_t activity, uint64_t now) {
  if (site->last_activity.load(std::memory_order_relaxed) != activity || site->visits.load(std::memory_order_relaxed) == 0) {
    site->visits.fetch_add(1, std::memory_order_relaxed);
    site->last_activity.store(activity, std::memory_order_relaxed);
  }
  site->hits.fetch_add(1, std::memory_order_relaxed);
  site->last_hit_ticks.store(now, std::memory_order_relaxed);
  if (ticks) site->ticks.fetch_add(ticks, std::memory_order_relaxed);
  if (bytes) site->bytes.fetch_add(bytes, std::memory_order_relaxed);
}

// Adds one gap of `ticks` between a drain at `site` and the next submitted work (shim/drain_idle.h).
inline void site_idle_after(CallSite* site, uint64_t ticks) {
  site->idle_after_ticks.fetch_add(ticks, std::memory_order_relaxed);
  site->idle_after_count.fetch_add(1, std::memory_order_relaxed);
}

// The clock at the first hit of the process's first call site (its first recorded CUDA
// call): where its CUDA-active window starts (policy::in_steady_loop); 0 before any.
uint64_t first_site_ticks();

// Visits every call site (for reports and findings).
template <typename F>
void for_each_site(F&& f);

// Returns the table (for for_each_site) and its capacity.
CallSite* site_table();
size_t site_capacity();

// Empties the table (tests, a forked child).
void sites_reset();

// A native frame as a place in a file on disk, so that `cudashim report` can name
// its source line after the process is gone. Cold path only (report time): dladdr1,
// dl_iterate_phdr, readlink and stat.
struct FrameFile {
  char path[512] = {};        // the module's file ("" when no module contains the address)
  uint64_t address = 0;       // the return address as a link-time (ELF virtual) address of that file
  char build_id[129] = {};    // NT_GNU_BUILD_ID in hex, read from the loaded image; "" when none
  uint64_t size = 0;          // the file's size and modification time at report time (0 when unknown)
  int64_t mtime_ns = 0;
};

// Fills `out` for `return_address`; false when no loaded module contains it.
bool frame_file(const void* return_address, FrameFile& out);

// How the Python stack is read; installed by the shim when CPython is in the
// process (python_stack.cpp), nullptr otherwise.
using PyLocate = void (*)(PyLocation& out);
// PyCapture also sets *warmup when a compile or autotuning frame lies between the call and the
// user's frame (read over the whole walk, deeper than the frames kept).
using PyCapture = int (*)(PyFrameText* frames, int max, bool* warmup);
extern std::atomic<PyLocate> g_py_locate;
extern std::atomic<PyCapture> g_py_capture;

template <typename F>
void for_each_site(F&& f) {
  CallSite* t = site_table();
  for (size_t i = 0; i < site_capacity(); ++i)
    if (t[i].key.load(std::memory_order_acquire) != 0 && t[i].captured.load(std::memory_order_acquire) == 2) f(t[i]);
}

}  // namespace cudashim::recorder
