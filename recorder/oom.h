// oom.h: the context of out-of-memory events, real (the driver said 2) or a
// policy denial. Not on a hot path: written when an allocation fails.
#pragma once
#include <atomic>
#include <cstdint>

#include "shim/hook_catalog.h"

namespace cudashim::recorder {

struct OomEvent {
  HookId api;
  int device;
  uint64_t requested;
  uint64_t capped_bytes;  // what the device held against its cap at that moment
  uint64_t cap;           // 0 = no cap
  bool denied_by_policy;
  const char* reason;     // static text: "cap", "managed denied", "managed oversubscription", "driver"
};

// Records one event (the count, and the last event's details).
void record_oom(const OomEvent& e);

struct OomSummary {
  uint64_t count, denied;
  OomEvent last;
};
OomSummary oom_summary();
void oom_reset();

}  // namespace cudashim::recorder
