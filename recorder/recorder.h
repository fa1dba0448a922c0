// recorder.h: what cudashim records, behind a narrow API.
//
// The shim's wrappers make one call here per intercepted call; unit tests call the
// same functions directly, with no preloading. Everything on the call path is
// lock-free and allocation-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "recorder/ledger.h"
#include "catalog/mem_kinds.h"
#include "recorder/thread_slots.h"
#include "catalog/hooks.h"

namespace cudashim::recorder {

// A CUDA error that leaves the context unusable (illegal address, launch failure,
// ...): the flight record is written when the driver first returns one.
constexpr bool is_sticky_error(uint64_t r) {
  return r == 700 || r == 702 || r == 714 || r == 715 || r == 716 || r == 717 || r == 718 || r == 719 || r == 720;
}

// Writes the flight record once (recorder/flight_recorder.cpp). Not a hot path.
void on_sticky_error(HookId id, uint64_t result);

// RAII guard for one intercepted call on this thread: tracks nesting (a runtime
// call that reaches the driver), so blocked time is summed once, at the outermost
// hook, while each hooked ABI still counts its own calls.
class CallScope {
 public:
  explicit CallScope(HookId id) : ts_(thread_state()), id_(id), outermost_(ts_.depth++ == 0) {
    if (outermost_) ts_.outer_id = static_cast<uint32_t>(id);
  }
  ~CallScope() { --ts_.depth; }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // Records the end of the call: its result code (0 = success) and wall time (0 when untimed).
  void finish(uint64_t result, uint64_t ns) {
    HookCounters& c = ts_.slot->hooks[static_cast<size_t>(id_)];
    bump(ts_, c.calls, 1);
    ThreadSlot& s = *ts_.slot;
    const uint64_t n = s.ring_next.load(std::memory_order_relaxed);
    s.ring[n % kRingSize] = RingEntry{ns, static_cast<uint16_t>(id_), 0, static_cast<uint32_t>(result)};
    s.ring_next.store(n + 1, std::memory_order_release);
    if (__builtin_expect(result != 0, 0)) {
      bump(ts_, c.errors, 1);
      c.last_error.store(result, std::memory_order_relaxed);
      if (is_sticky_error(result)) on_sticky_error(id_, result);
    }
    if (ns != 0) {
      bump(ts_, c.time_ns, ns);
      if (outermost_ && hook_info(id_).timing == Timing::BLOCKING) bump(ts_, ts_.slot->blocked_outer_ns, ns);
    }
    if (__builtin_expect(!outermost_, 0)) {  // the API list shows one wait once: under its outer call
      bump(ts_, c.nested_calls, 1);
      if (ns != 0) bump(ts_, c.nested_ns, ns);
      c.outer.store(ts_.outer_id + 1, std::memory_order_relaxed);
    }
  }
  // Adds bytes moved by a copy or memset.
  void add_bytes(uint64_t bytes) { bump(ts_, ts_.slot->hooks[static_cast<size_t>(id_)].bytes, bytes); }
  bool outermost() const { return outermost_; }
  ThreadState& thread() const { return ts_; }

 private:
  ThreadState& ts_;
  HookId id_;
  bool outermost_;
};

// Records a successful allocation (the ledger is kept at the driver level only).
inline void record_alloc(MemKind kind, uint64_t key, uint64_t bytes, int device) {
  if (kind == MemKind::ipc) bytes = 0;  // another process's memory: mapped, not allocated
  ledger_insert(kind, key, bytes, device);
}

// Records a free; call it *before* the real free so the address cannot be
// handed out again in between.
inline void record_free(MemKind kind, uint64_t key) { ledger_erase(kind, key); }

// Process facts gathered once, outside hooks.
struct ProcessInfo {
  int pid = 0, ppid = 0;
  int rank = -1;  // RANK, LOCAL_RANK or SLURM_PROCID; -1 when none is set
  std::string host, exe;
  std::vector<std::string> argv;  // at start-up: after main's pthread_exit /proc/self/cmdline reads empty
  uint64_t start_unix_ns = 0, start_mono_ns = 0;
};

// Fills `info` for this process (reads /proc, the environment, the clock).
void capture_process_info(ProcessInfo& info);

// The process's arguments as /proc/self/cmdline has them now (capture_process_info: start-up;
// empty once the main thread has left through pthread_exit).
std::vector<std::string> process_argv();

// Returns the path of the first loaded libcuda.so*, or "" when none is loaded (on a
// machine without a driver, a program's dlopen("libcuda.so.1") fails before any hooked call).
std::string loaded_libcuda();

// True when this process did anything worth a report (a hooked call or an allocation).
bool has_activity();

// Zeroes every counter and the ledger (tests; a forked child starts afresh).
void reset_all();

}  // namespace cudashim::recorder
