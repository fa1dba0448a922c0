// sync_rules.h: the rules that turn call sites and counters into findings
// (synchronization habits, allocator churn, pinned memory, deprecated APIs; the rows are
// in catalog/findings.def). Thresholds come from the policy.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "catalog/findings.h"
#include "policy/settings_load.h"
#include "recorder/callsites.h"

namespace cudashim::policy {

struct SyncThresholds {
  bool call_sites = true;  // sync.call_sites
  uint64_t warmup_hits = 10;
  uint64_t readback_max_bytes = 4096;
};

// Reads the thresholds from the settings (start-up).
void configure_sync(const Settings& s);
const SyncThresholds& sync_thresholds();

// Returns what a call site in the steady state shows, or FindingId::none.
FindingId classify_site(const recorder::CallSite& s);

// Returns the index of the first Python frame that is the user's code (not in
// site-packages, the standard library or a frozen module); 0 when none is.
int user_frame_index(const recorder::CallSite& s);

// Where a site is, for people: the user's Python line (file:line (function)), else
// the first native frame outside CUDA's libraries and cudashim, else the return address.
std::string describe_site(const recorder::CallSite& s);

// The native frame that stands for a site: the first outside the CUDA runtime (else the
// hook's return address); nullptr for a site named by its Python line. describe_site names it,
// the report's where_frame gives its file and address.
const void* site_frame(const recorder::CallSite& s);

// One finding of the process: its rule, the calls and blocked time behind it, and its
// call sites, the costliest first (none for a process-wide finding).
struct FindingSite {
  const recorder::CallSite* site;
  uint64_t ticks;  // blocked ticks at that site
};
struct FindingResult {
  FindingId finding;
  uint64_t count;
  uint64_t blocked_ns;
  std::vector<FindingSite> sites;
};

// Evaluates the rules over the call sites and counters now: the findings, sorted by
// blocked time (report/sections/findings.cpp and the exit summary render them).
std::vector<FindingResult> evaluate_findings();

}  // namespace cudashim::policy
