// sync_rules.h: the rules that turn call sites and counters into findings (synchronization
// habits, allocator churn, pinned memory, deprecated APIs; the rows are in
// catalog/findings.def), defined in policy/rules/sync.cpp. Thresholds come from the policy.
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
  uint64_t loop_share_pct = 5;  // sync.loop_share
  uint64_t readback_max_bytes = 4096;
  uint64_t warn_min_saving_ns = 20000;  // sync.warn_min_saving_us, in ns
  uint64_t warn_min_step_share_pct = 1;  // sync.warn_min_step_share
};

// The predicted saving per step of a habit that blocked the host `blocked` per step, in a step of
// `step` (0: unknown), on a GPU whose measured idle per step is `gpu_idle` (kNoGpuIdle: not
// measured) (docs/findings.md, "What a finding costs"). With the habit a step is the host's own
// time H = step - blocked plus the wait; without it the host queues the next step's work while
// the GPU runs, so a step takes max(H, G), G the GPU's busy time per step. The saving is
// step - max(H, G) = min(blocked, step - G): at most the blocked time, at most the host's own
// time (the GPU was busy at least while the host waited, G >= blocked), and at most the GPU's
// idle time per step (step - G), where NVML measured it over the steady state.
// `host_staged` (a DRAINS_QUEUE_HOST_STAGED row: a pageable copy): part of the wait is the
// host's own staging copy, which the fix removes while the GPU waited for the data, so G >=
// blocked does not hold and the host's-own-time bound is dropped: min(blocked, GPU idle).
inline constexpr uint64_t kNoGpuIdle = ~uint64_t{0};
// `host_work`: the host's own time a step that the habit causes besides its wait (an allocator
// habit's re-allocations: cudaMalloc's time at the loop's allocation sites after empty_cache()
// gave the cache back), removed with it: the step loses min(blocked + host_work, step - blocked,
// GPU idle per step).
constexpr uint64_t predicted_saving_ns(uint64_t blocked, uint64_t step, uint64_t gpu_idle, bool host_staged = false,
                                       uint64_t host_work = 0) {
  uint64_t saving = blocked + host_work;
  if (!host_staged && step > blocked && step - blocked < saving) saving = step - blocked;
  if (gpu_idle < saving) saving = gpu_idle;
  return saving;
}

// The GPU's idle share over the steady loop so far (NVML's device-wide samples; the busiest
// device when several have a diagnosis), or a negative value when there are too few samples
// to say (policy/rules/gpu_time_host.cpp).
double steady_gpu_idle_share();

// True when a priced finding is worth a warning: its saving per step reaches both floors
// (sync.warn_min_saving_us, sync.warn_min_step_share of `step_ns`).
bool above_warning_floor(uint64_t saving_per_step_ns, uint64_t step_ns);

// One site's price, as the live log states it when the flush thread announces the site (the
// report prices the whole finding, all its sites: policy/rules/sync.cpp): its step (the mean
// time between two visits), its blocked time per visit and its saving, by the finding's own
// model (churn's re-allocations included). Not priced
// (priced false) for a waiter's sampled site or a site never visited.
struct SitePrice {
  bool priced = false;
  uint64_t step_ns = 0, blocked_per_step_ns = 0, saving_per_step_ns = 0;
};
SitePrice site_price(FindingId rule, const recorder::CallSite& s, double gpu_idle_share);

// Reads the thresholds from the settings (start-up).
void configure_sync(const Settings& s);
const SyncThresholds& sync_thresholds();

// A read-back: a device-to-host copy of at most sync.readback_max_bytes (a loss, a flag, a count).
inline bool is_readback(CopyDir dir, uint64_t bytes) {
  return dir == CopyDir::D2H && bytes <= sync_thresholds().readback_max_bytes;
}

// Returns what a call site in the steady state shows, or FindingId::none.
FindingId classify_site(const recorder::CallSite& s);

// A waiter's site (shim/wait_sampler.h) is a finding when it holds at least 1/kWaiterShareOf of
// the visits (steps) its read-back's site got at all its waiters: the line the main thread waits
// at for the read-back holds most of them; a line whose sleeps end in a read-back only by chance
// holds a few. Visits, not samples: a compile's autotuning, hundreds of samples of one call at
// one line, is one visit and does not dilute the loop's line. Two lines that both wait for
// read-backs through the same XLA site still share them.
inline constexpr uint64_t kWaiterShareOf = 5;
bool waiter_is_finding(const recorder::CallSite& s);

// True when the site recurs across the program's steady-state loop: more visits than the
// warm-up (sync.warmup_hits), a visit being a run of hits with no other work of the thread
// between them (no launch, no hit at another place: recorder::site_hit), and those visits
// spread over at least sync.loop_share percent of the loop window (loop_window_ticks). 52
// copies of one model.cuda() are one visit; DDP's constructor, 65 syncs with launches between
// them in 12 ms, is 65 visits but no loop (2 % of the window on the H200); a read-back in every
// step of a loop is one visit per step, over the loop's share of the window.
// `window` 0: loop_window_ticks() (pass it when testing many sites: computing it walks the table).
bool in_steady_loop(const recorder::CallSite& s, uint64_t window = 0);

// The loop window of the whole run, in ticks: the union of the spans (first hit to last) of
// the sites with more visits than the warm-up, the time the program spent repeating itself.
// Not the process's CUDA-active window from its first call: a framework's set-up of several
// seconds between an early CUDA call and the first step (Lightning's Trainer, 8 s on the H200)
// made a 40-step loop 4 % of that window.
uint64_t loop_window_ticks();

// The steady-state loop's extent in ticks: from the first hit to the last of the sites in it
// (in_steady_loop). The GPU time's steady window when there is one (policy/rules/gpu_time.h);
// {0, 0} when no site is in the loop.
struct TickSpan {
  uint64_t first = 0, last = 0;
};
TickSpan steady_loop_span();

// The live log's test at a hit at clock `now` (shim/sync_observer.cpp): in_steady_loop over the
// window so far (from the first site's first hit: the loop window would walk the table), and
// the visits spread over at least kLiveMinSpanNs, so that a burst early in the run, which fills
// the window so far, is not announced before the run has gone on without it.
inline constexpr uint64_t kLiveMinSpanNs = 1000000000ull;
bool steady_so_far(const recorder::CallSite& s, uint64_t now);

// Returns the index of the user's innermost Python frame (policy/user_frame.h: not in
// site-packages, the standard library or a frozen module); -1 when none is.
int user_frame_index(const recorder::CallSite& s);

// The framework whose own code the site is entirely in ("torch", "jax", ...: the top-level
// package under site-packages of its innermost Python frame, or of its native frame when it has
// no Python frame), or the host framework its path from the user's line passes through
// (policy/host_framework.h: "transformers"); "" when the site is the user's own.
std::string site_framework(const recorder::CallSite& s);

// A runtime finding's severity at a site: its row's, or info when the site is inside a
// framework (nothing the user can change from their code).
Severity finding_severity(FindingId f, const std::string& framework);

// Where a site is, for people: the user's Python line (file:line (function)), else
// the first native frame outside CUDA's libraries and cudashim, else the return address.
std::string describe_site(const recorder::CallSite& s);

// The native frame that stands for a site: the first outside the CUDA runtime (else the
// hook's return address); nullptr for a site named by its Python line. describe_site names it,
// the report's where_frame gives its file and address.
const void* site_frame(const recorder::CallSite& s);

// Evaluates the rules over the call sites and counters now: the findings (their runtime part:
// id, count, blocked_ns, sites, framework, steps, gpu_idle_after_ns, severity_override, and
// exact_fix when the fix is not the row's, its price: step_ns, loop_ns, saving_per_step_ns, and
// `also` for another row's aspect merged in at the same line), the user's first, each group sorted by blocked time
// (report/sections/findings.cpp and the exit summary render them).
std::vector<Finding> evaluate_findings();

}  // namespace cudashim::policy
