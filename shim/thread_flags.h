// thread_flags.h: what the shim's hooks leave for each other on one thread, and the
// recursion guard. The recorder's ThreadState holds what is recorded; this holds the
// shim's hand-offs between nested hooks and between a hook and the next one.
#pragma once
#include <cstdint>

namespace cudashim::shim {

struct ThreadFlags {
  uint32_t internal;         // >0 while cudashim's own code runs: hooks pass straight through
  uint32_t blocking_calls;   // sampling counter for thread CPU time (spin-wait detection)
  bool readback_pending;     // this thread's last copy was a small device-to-host one (a read-back)
  bool frameless_copier;     // this thread's last host-device copy ran with no Python frame in a process with
                             // CPython (XLA's threads): its next copies mark their start (shim/wait_sampler.h)
  bool pooled_free;          // the pool took this thread's current free into its cache (cudaFree over cuMemFree)
  bool pool_work;            // this thread queued stream work since its last pooled free: that free makes a
                             // fence of its own (shim/pool.h: another thread's fence may miss this thread's marks)
  bool oom_recovery;         // an allocation of this thread ran out of memory and none has succeeded since:
                             // its frees are an allocator's cache flush (torch's retry), not churn
  uint8_t inner_alloc_kind;  // the MemKind of inner_alloc_key
  uint64_t inner_alloc_key;  // the allocation a driver call made under this thread's current outermost
                             // hook (cudaMalloc over cuMemAlloc_v2): the outer call site claims it
  uint64_t activity;         // bumped by each kernel launch and each call-site hit at another place than
                             // the thread's previous one: a site whose hits see it unchanged between them
                             // is hit in one burst, not across a loop (policy/sync_rules.h, in_steady_loop)
  uint64_t last_place;       // the place (Python user line, else native return address) of the thread's last hit
  void* drained_site;        // the recorder::CallSite of this thread's last call that drained the queue, until
                             // its next submitted work (shim/drain_idle.h); nullptr when none is pending
  uint64_t drained_at;       // that call's return, in ticks (recorder/clock.h)
};

// initial-exec TLS, like the recorder's: one %fs-relative access, no __tls_get_addr.
extern __thread ThreadFlags g_flags __attribute__((tls_model("initial-exec")));

// While one lives, this thread runs cudashim's own code: its dlopen/dlsym calls are not
// the program's and hooked CUDA calls it makes pass straight through. Nests.
class InternalScope {
 public:
  InternalScope() { ++g_flags.internal; }
  ~InternalScope() { --g_flags.internal; }
  InternalScope(const InternalScope&) = delete;
  InternalScope& operator=(const InternalScope&) = delete;
};

// True while this thread runs cudashim's own code (an InternalScope is alive).
inline bool in_internal() { return g_flags.internal != 0; }

}  // namespace cudashim::shim
