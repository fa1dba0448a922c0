// oom_notice.h: the log line of an out-of-memory (cold path).
#pragma once
#include <cstdint>

#include "shim/hook_catalog.h"

namespace cudashim::shim {

// Logs an allocation that ended in CUDA_ERROR_OUT_OF_MEMORY (`denied`: by the policy, else
// by the driver). The first one gets a line with its context (recorder::oom_first():
// the ledger, the largest block still available, the top call sites); later driver
// refusals are rate-limited (policy denials have their own line, note_denied()).
void note_oom(HookId id, int device, uint64_t bytes, bool denied);

}  // namespace cudashim::shim
