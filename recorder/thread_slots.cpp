// thread_slots.cpp: the static slot array and its bookkeeping.
#include "recorder/thread_slots.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "recorder/event_stream.h"

namespace cudashim::recorder {

__thread ThreadState g_tls __attribute__((tls_model("initial-exec"))) = {nullptr, 0, 0};

namespace {
// Zero-initialized BSS: pages are touched only by threads that exist.
constinit ThreadSlot g_slots[kMaxThreadSlots + 1];  // zeroed .bss, no start-up loop
constinit std::atomic<uint32_t> g_next_slot{0};
ThreadSlot& overflow_slot() { return g_slots[kMaxThreadSlots]; }
}  // namespace

void claim_slot(ThreadState& ts) {
  const uint32_t i = g_next_slot.fetch_add(1, std::memory_order_relaxed);
  if (i < kMaxThreadSlots) {
    ts.slot = &g_slots[i];
  } else {
    overflow_slot().shared = true;
    ts.slot = &overflow_slot();
  }
  // gettid once per thread, outside any hot path.
  ts.slot->tid.store(static_cast<uint32_t>(syscall(SYS_gettid)), std::memory_order_relaxed);
  stream_ensure_started();  // the first hooked call of the process starts its event stream
}

void release_slot_after_fork() { g_tls.slot = nullptr; }

ThreadSlot* slot_table() { return g_slots; }
uint32_t slots_in_use() {
  const uint32_t used = g_next_slot.load(std::memory_order_acquire);
  return used < kMaxThreadSlots ? used : kMaxThreadSlots + 1;
}

uint64_t calls_of(size_t hook) {
  uint64_t n = 0;
  const uint32_t used = slots_in_use();
  for (uint32_t s = 0; s < used; ++s) n += g_slots[s].hooks[hook].calls.load(std::memory_order_relaxed);
  return n;
}

void sum_slots(CounterTotals& out) {
  std::memset(&out, 0, sizeof out);
  const uint32_t used = g_next_slot.load(std::memory_order_acquire);
  const uint32_t n = used < kMaxThreadSlots ? used : kMaxThreadSlots + 1;
  for (uint32_t s = 0; s < n; ++s) {
    const ThreadSlot& slot = g_slots[s];
    for (size_t h = 0; h < kHookCount; ++h) {
      out.calls[h] += slot.hooks[h].calls.load(std::memory_order_relaxed);
      out.errors[h] += slot.hooks[h].errors.load(std::memory_order_relaxed);
      out.time_ns[h] += slot.hooks[h].time_ns.load(std::memory_order_relaxed);
      out.bytes[h] += slot.hooks[h].bytes.load(std::memory_order_relaxed);
      if (const uint64_t e = slot.hooks[h].last_error.load(std::memory_order_relaxed)) out.last_error[h] = e;
      out.nested_calls[h] += slot.hooks[h].nested_calls.load(std::memory_order_relaxed);
      out.nested_ns[h] += slot.hooks[h].nested_ns.load(std::memory_order_relaxed);
      if (const uint64_t o = slot.hooks[h].outer.load(std::memory_order_relaxed)) out.outer[h] = o;
    }
    out.blocked_outer_ns += slot.blocked_outer_ns.load(std::memory_order_relaxed);
    out.legacy_stream_launches += slot.legacy_stream_launches.load(std::memory_order_relaxed);
    out.blocking_stream_launches += slot.blocking_stream_launches.load(std::memory_order_relaxed);
  }
  out.threads = used;
}

void reset_slots() {
  const uint32_t used = g_next_slot.load(std::memory_order_relaxed);
  const uint32_t n = used < kMaxThreadSlots ? used : kMaxThreadSlots + 1;
  for (uint32_t s = 0; s < n; ++s) {
    ThreadSlot& slot = g_slots[s];
    for (auto& h : slot.hooks) {
      h.calls.store(0, std::memory_order_relaxed);
      h.errors.store(0, std::memory_order_relaxed);
      h.time_ns.store(0, std::memory_order_relaxed);
      h.bytes.store(0, std::memory_order_relaxed);
      h.last_error.store(0, std::memory_order_relaxed);
    }
    slot.blocked_outer_ns.store(0, std::memory_order_relaxed);
    slot.ring_next.store(0, std::memory_order_relaxed);
    slot.trace_next.store(0, std::memory_order_relaxed);
    slot.legacy_stream_launches.store(0, std::memory_order_relaxed);
    slot.blocking_stream_launches.store(0, std::memory_order_relaxed);
  }
}

}  // namespace cudashim::recorder
