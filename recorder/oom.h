// oom.h: the context of out-of-memory events, real (the driver said 2) or a
// policy denial. Not on a hot path: written when an allocation fails.
#pragma once
#include <atomic>
#include <cstdint>

#include "catalog/hooks.h"

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

// ---- the context of the first out-of-memory, snapshotted when it happens (cold path:
// it reads the whole ledger, allocates and locks).

// What the snapshot asks the policy and the driver: a device's cap (0 = none) and the
// driver's free bytes for the current context's device (0 = unknown).
struct OomQueries {
  uint64_t (*cap_of)(int device);
  uint64_t (*driver_free)(int device);
};
void oom_configure(OomQueries q);

struct OomDevice {
  int device;
  uint64_t live_bytes, peak_bytes;  // device-resident bytes held (cached pool blocks included)
  uint64_t capped_bytes;            // what counts against the cap
  uint64_t cached_bytes;            // of those, held in cudashim's pool
  uint64_t cap;                     // 0 = none
  uint64_t largest_block;           // what one more allocation could still get (see basis)
  const char* basis;                // "cap" (cap - capped), "driver_free" (an upper bound), "unknown"
};
struct OomSite {
  const void* site;  // recorder/callsites.h CallSite, nullptr for allocations without a known site
  uint64_t bytes, count;
};
struct OomSnapshot {
  bool taken = false;
  OomEvent event{};
  uint64_t at_ns = 0;  // monotonic
  int devices = 0;
  OomDevice device[8]{};
  int sites = 0;
  OomSite site[8]{};  // live allocations grouped by call site, largest first
};

// Copies the snapshot of the first out-of-memory (taken == false when none happened).
OomSnapshot oom_first();

}  // namespace cudashim::recorder
