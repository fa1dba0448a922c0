// torch_counters.h: reads PyTorch's allocator counters from inside the process, with
// no import and no change to user code (recorder/torch_memory.h keeps what is read).
#pragma once
#include <atomic>

namespace cudashim::shim {

// On (the default) or off (CUDASHIM_TORCH_COUNTERS=0), from the policy at start-up.
void torch_counters_configure(bool on);

// Asks CPython, once, to register the exit handler that reads the counters. Cheap after
// the first call (one relaxed load); a process without CPython (or with CPython 3.8) is
// left alone. Called on each successful device allocation (the driver's or the pool's), so
// only by a thread that allocates, never by the shim's own threads.
void torch_counters_arm_slow();
// 0 not tried (or to retry), 1 trying, 2 CPython asked, 3 nothing to do (no CPython, 3.8, off).
extern std::atomic<int> g_torch_arm_state;
inline void torch_counters_arm() {
  if (__builtin_expect(g_torch_arm_state.load(std::memory_order_relaxed) < 2, 0)) torch_counters_arm_slow();
}

// An out-of-memory on this thread: when it is Python's main thread, the counters are
// read again once that thread is back between two bytecodes (torch has then freed its
// cache and raised). Cold path.
void torch_counters_after_oom();

}  // namespace cudashim::shim
