// oom_notice.h: the log line of an out-of-memory (cold path).
#pragma once
#include <cstdint>

#include "catalog/hooks.h"
#include "shim/cuda_abi.h"
#include "shim/thread_flags.h"

namespace cudashim::shim {

// Logs an allocation that ended in CUDA_ERROR_OUT_OF_MEMORY (`denied`: by the policy, else
// by the driver). The first one gets a line with its context (recorder::oom_first():
// the ledger, the largest block still available, the top call sites); later driver
// refusals are rate-limited (policy denials have their own line, note_denied()).
// It also marks this thread as recovering: the frees it makes until its next successful
// allocation are an allocator's cache flush (torch frees every cached segment and retries),
// which policy::classify_site does not call churn.
void note_oom(HookId id, int device, uint64_t bytes, bool denied);

// A successful allocation on this thread ends its recovery. One TLS load on the allocation path.
inline void note_alloc_succeeded() {
  ThreadFlags& ts = g_flags;
  if (__builtin_expect(ts.oom_recovery, 0)) ts.oom_recovery = false;
}

}  // namespace cudashim::shim
