// thread_slots.h: per-thread call counters, written without locks or atomics' RMW.
//
// Each thread claims one slot of a static array the first time it enters a hook
// and is the only writer of that slot (plain relaxed load+store, no lock prefix).
// Readers (the report) sum the slots. Threads beyond kMaxThreadSlots share one
// overflow slot updated with fetch_add. Nothing here allocates.
#pragma once
#include <atomic>
#include <cstdint>

#include "catalog/hooks.h"

namespace cudashim::recorder {

struct HookCounters {
  std::atomic<uint64_t> calls;
  std::atomic<uint64_t> errors;
  std::atomic<uint64_t> time_ns;  // wall time inside the real call, in clock ticks (timed rows only)
  std::atomic<uint64_t> bytes;    // bytes copied or set (copy rows)
  std::atomic<uint64_t> last_error;  // the last non-zero result code (0 = none yet)
  std::atomic<uint64_t> nested_calls;  // calls made under another hooked call (cuStreamSynchronize
  std::atomic<uint64_t> nested_ns;     // under cudaStreamSynchronize) and their time, in ticks
  std::atomic<uint64_t> outer;         // HookId + 1 of the outermost call the last nested one ran under
};

// The flight recorder: the last calls of a thread, overwritten in a ring. One
// 16-byte store and an index bump per call; read by the crash handler.
inline constexpr uint32_t kRingSize = 64;
struct RingEntry {
  uint64_t duration;  // clock ticks inside the call; 0 for untimed calls (launches)
  uint16_t hook;    // HookId
  uint16_t pad;
  uint32_t result;  // CUresult / cudaError_t
};

// The timeline: blocking and timed calls of a thread, for the Chrome/Perfetto trace.
// Written by the observer at call sites' outermost hooks; the oldest are overwritten.
inline constexpr uint32_t kTraceSize = 2048;
struct TraceEvent {
  uint64_t start;        // clock ticks
  uint64_t duration;     // clock ticks
  const void* site;      // recorder/callsites.h, opaque here
  uint16_t hook;
};

struct ThreadSlot {
  HookCounters hooks[kHookCount];
  TraceEvent trace[kTraceSize];
  std::atomic<uint64_t> trace_next;
  RingEntry ring[kRingSize];
  std::atomic<uint64_t> ring_next;              // total calls recorded (ring index = n % kRingSize)
  std::atomic<uint64_t> blocked_outer_ns;        // blocked ticks of outermost hooks only
  std::atomic<uint64_t> legacy_stream_launches;    // launches on the legacy default stream
  std::atomic<uint64_t> blocking_stream_launches;  // launches on a blocking stream the program created
  std::atomic<uint32_t> tid;
  // A thread with no Python frame inside a host-device copy (shim/wait_sampler.h): 0 none, 1 a
  // copy, 2 a read-back. Its own plain stores at the copy's start and return; the sampler reads.
  std::atomic<uint8_t> copy_in_flight;
  bool shared = false;  // the overflow slot: updated with fetch_add
};

inline constexpr uint32_t kMaxThreadSlots = 512;

// The calling thread's state. depth counts nested hooks on this thread. (What the shim's
// hooks hand each other on a thread is the shim's own: shim/thread_flags.h.)
struct ThreadState {
  ThreadSlot* slot;
  uint32_t depth;
  uint32_t outer_id;  // the HookId of this thread's current outermost call
};

// initial-exec TLS: the preload library is loaded at start-up, so the static TLS
// block has room, and access is one %fs-relative load (no __tls_get_addr call).
extern __thread ThreadState g_tls __attribute__((tls_model("initial-exec")));

// Claims a slot for the calling thread. Slow path of thread_state().
void claim_slot(ThreadState& ts);

// In a forked child, on the thread that forked: forgets the parent's slot, so that this
// thread's next hooked call claims a fresh one with its own tid and starts the child's event
// stream and flush thread (claim_slot). Without it a child forked by a thread that had
// already called CUDA had no flush thread, and its _exit wrote no report (issue 37.3).
void release_slot_after_fork();

// Returns this thread's state, claiming a slot on first use. Never allocates.
inline ThreadState& thread_state() {
  ThreadState& ts = g_tls;
  if (__builtin_expect(ts.slot == nullptr, 0)) claim_slot(ts);
  return ts;
}

// Adds `v` to counter `c` of this thread's slot.
inline void bump(const ThreadState& ts, std::atomic<uint64_t>& c, uint64_t v) {
  if (__builtin_expect(ts.slot->shared, 0))
    c.fetch_add(v, std::memory_order_relaxed);
  else
    c.store(c.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

// The calls of one hook summed over every slot. Safe from any thread (no shared buffer).
uint64_t calls_of(size_t hook);

// Sums of every slot, for reports and tests.
struct CounterTotals {
  uint64_t calls[kHookCount];
  uint64_t errors[kHookCount];
  uint64_t time_ns[kHookCount];
  uint64_t bytes[kHookCount];
  uint64_t last_error[kHookCount];
  uint64_t nested_calls[kHookCount];
  uint64_t nested_ns[kHookCount];
  uint64_t outer[kHookCount];  // HookId + 1 of the outer call of the last nested one, 0 when none
  uint64_t blocked_outer_ns;
  uint64_t legacy_stream_launches;
  uint64_t blocking_stream_launches;
  uint32_t threads;
};
void sum_slots(CounterTotals& out);

// The slot array and how many slots were claimed (the flight recorder reads them).
ThreadSlot* slot_table();
uint32_t slots_in_use();

// Zeroes every slot (tests; and a forked child, which starts its own report).
void reset_slots();

}  // namespace cudashim::recorder
