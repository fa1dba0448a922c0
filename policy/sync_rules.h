// sync_rules.h: the rules that turn call sites and counters into findings
// (synchronization habits, allocator churn, pinned memory, deprecated APIs; the rows are
// in catalog/findings.def). Thresholds come from the policy.
#pragma once
#include <cstdint>
#include <string>

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

// The "findings" section of the report, sorted by blocked time, given the
// process's wall time.
std::string findings_report_json(uint64_t wall_ns);

// The exit summary: one line per finding, sorted by blocked time ("" when none).
std::string findings_summary_text(uint64_t wall_ns);

}  // namespace cudashim::policy
