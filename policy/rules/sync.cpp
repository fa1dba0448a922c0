// policy/rules/sync.cpp: the sync, copy, stream and memory rules (declared in policy/sync_rules.h) that turn the recorded call sites into findings.
#include "policy/sync_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "policy/rules/fragmentation.h"
#include "policy/host_framework.h"
#include "policy/user_frame.h"
#include "recorder/clock.h"
#include "recorder/events.h"
#include "recorder/thread_slots.h"
#include "symbols/symbolize.h"

namespace cudashim::policy {
namespace {

SyncThresholds g_thresholds;
constexpr uint64_t kSmallH2D = 64 * 1024;  // "not the small host-to-device ones"

struct SiteView {
  const recorder::CallSite* site;
  uint64_t ticks;
};

struct Agg {
  uint64_t count = 0, ticks = 0, steps = 0;
  uint64_t idle_after_ticks = 0;  // GPU idle after its sites' drains (recorder::CallSite::idle_after_ticks)
  uint64_t idle_after_count = 0;  // drains measured at its sites (0: no idle seen, the saving is the blocked time)
  bool also_pageable = false;     // a pageable copy's site at one of its lines was merged in
  std::vector<SiteView> sites;
  const char* info_fix = nullptr;  // set: the finding is info this run, and this is why (instead of the row's fix)
};

// The findings of frameworks' own sites, one Agg per (finding, framework).
struct FrameworkAgg {
  FindingId finding;
  std::string framework;
  Agg agg;
};


}  // namespace

const void* site_frame(const recorder::CallSite& s) {
  if (s.py_depth > 0) return nullptr;
  for (int i = 0; i < s.native_depth; ++i) {
    const auto sym = symbols::symbolize(s.native[i]);
    if (!sym.module.empty() && !symbols::is_runtime_frame(sym)) return s.native[i];
  }
  return s.return_address;
}

std::string describe_site(const recorder::CallSite& s) {
  if (s.py_depth > 0) {
    const int u = user_frame_index(s);
    const auto& f = s.py[u < 0 ? 0 : u];
    const std::string where = fmt::format("{}:{} ({})", f.file, f.line, f.function);
    if (u < 0) return fmt::format("{}, inside {}", where, framework_of(f.file));
    // Reached from the user's line through a host framework: the sync's own place, the framework, the line.
    const std::string host = host_framework(s);
    if (!host.empty())
      return fmt::format("{}:{} ({}), inside {}, reached from your line {}", s.py[0].file, s.py[0].line, s.py[0].function,
                         host, where);
    // Made by a helper package the user's line calls: the user's line, and the helper's function.
    if (const int h = helper_frame(s); h >= 0)
      return fmt::format("{}:{} ({}), inside {}, reached from your line {}", s.py[h].file, s.py[h].line, s.py[h].function,
                         framework_of(s.py[h].file), where);
    return where;
  }
  const std::string where = symbols::to_string(symbols::symbolize(site_frame(s)));
  const std::string fw = site_framework(s);
  return fw.empty() ? where : fmt::format("{}, inside {}", where, fw);
}

uint64_t loop_window_ticks() {
  // The union of the candidates' spans [first hit, last hit]: the time the program spent in
  // phases that repeat. Set-up that makes a CUDA call and then runs for seconds on the host
  // (Lightning's Trainer before its first step) is no part of it.
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  recorder::for_each_site([&](const recorder::CallSite& s) {
    if (s.warmup || s.visits.load(std::memory_order_relaxed) <= g_thresholds.warmup_hits) return;
    const uint64_t first = s.first_hit_ticks.load(std::memory_order_relaxed);
    const uint64_t last = s.last_hit_ticks.load(std::memory_order_relaxed);
    if (last > first) spans.emplace_back(first, last);
  });
  std::sort(spans.begin(), spans.end());
  uint64_t total = 0, open = 0, close = 0;
  for (const auto& [first, last] : spans) {
    if (close == 0 || first > close) {
      total += close - open;
      open = first, close = last;
    } else {
      close = std::max(close, last);
    }
  }
  return total + (close - open);
}

namespace {

// True when the site's hits, first to last, span at least sync.loop_share percent of `window` ticks.
bool spread_over(const recorder::CallSite& s, uint64_t window) {
  if (g_thresholds.loop_share_pct == 0 || window == 0) return true;
  const uint64_t first = s.first_hit_ticks.load(std::memory_order_relaxed);
  const uint64_t last = s.last_hit_ticks.load(std::memory_order_relaxed);
  if (last <= first) return false;
  // 128 bits: ticks times 100 would overflow 64 after about two years of TSC ticks.
  return static_cast<unsigned __int128>(last - first) * 100 >=
         static_cast<unsigned __int128>(g_thresholds.loop_share_pct) * window;
}

}  // namespace

bool in_steady_loop(const recorder::CallSite& s, uint64_t window) {
  if (s.warmup) return false;  // a compile or autotuning burst (docs/findings.md)
  if (s.visits.load(std::memory_order_relaxed) <= g_thresholds.warmup_hits) return false;
  return spread_over(s, window != 0 ? window : loop_window_ticks());
}

TickSpan steady_loop_span() {
  const uint64_t window = loop_window_ticks();
  TickSpan span;
  recorder::for_each_site([&](const recorder::CallSite& s) {
    if (!in_steady_loop(s, window)) return;
    const uint64_t first = s.first_hit_ticks.load(std::memory_order_relaxed);
    const uint64_t last = s.last_hit_ticks.load(std::memory_order_relaxed);
    span.first = span.first ? std::min(span.first, first) : first;
    span.last = std::max(span.last, last);
  });
  return span;
}

namespace {
// kLiveMinSpanNs in hook-clock ticks, worked out at the first use (steady_so_far); 0 until then.
std::atomic<uint64_t> g_min_live_span_ticks{0};
}  // namespace

bool steady_so_far(const recorder::CallSite& s, uint64_t now) {
  // The window so far, from the first site's first hit: walking the table for the candidates'
  // spans at every hit would cost a hook too much, and the second below keeps bursts out.
  const uint64_t start = recorder::first_site_ticks();
  if (s.warmup) return false;
  if (s.visits.load(std::memory_order_relaxed) <= g_thresholds.warmup_hits || !spread_over(s, now > start ? now - start : 0))
    return false;
  // kLiveMinSpanNs in ticks, worked out once (the first site past its warm-up, a while after
  // start-up: the calibration behind ticks_to_ns is good to well under a percent by then), so
  // that a hit pays no conversion.
  uint64_t m = g_min_live_span_ticks.load(std::memory_order_relaxed);
  if (m == 0) {
    constexpr uint64_t kProbe = 1ull << 32;
    const uint64_t probe_ns = std::max<uint64_t>(ticks_to_ns(kProbe), 1);
    m = static_cast<uint64_t>(static_cast<unsigned __int128>(kLiveMinSpanNs) * kProbe / probe_ns);
    g_min_live_span_ticks.store(m, std::memory_order_relaxed);
  }
  const uint64_t first = s.first_hit_ticks.load(std::memory_order_relaxed);
  return now > first && now - first >= m;
}

std::string site_framework(const recorder::CallSite& s) {
  if (s.py_depth > 0) return user_frame_index(s) < 0 ? framework_of(s.py[0].file) : host_framework(s);
  const void* frame = site_frame(s);
  if (frame == nullptr) return {};
  // A native site (no Python frame: a framework's own thread, XLA's runtime) is the
  // framework's when the library that called lies in one's package (site-packages/jax_plugins/...).
  return framework_of(symbols::symbolize(frame).path.c_str());
}

Severity finding_severity(FindingId f, const std::string& framework) {
  return framework.empty() ? finding_info(f).severity : Severity::info;
}

namespace {

// Adds every site in the steady loop and the process-wide counters into `agg` (one entry per
// FindingId) and `by_framework`. Per call, no static state: renders may run side by side.
void aggregate(std::vector<Agg>& agg, std::vector<FrameworkAgg>& by_framework) {
  const uint64_t window = loop_window_ticks();
  recorder::for_each_site([&](const recorder::CallSite& s) {
    if (!in_steady_loop(s, window)) return;
    const uint64_t hits = s.hits.load(std::memory_order_relaxed);
    const uint64_t ticks = s.ticks.load(std::memory_order_relaxed);
    const std::string framework = site_framework(s);
    auto add = [&](FindingId f) {
      Agg* a = &agg[static_cast<int>(f)];
      if (!framework.empty()) {
        auto it = std::find_if(by_framework.begin(), by_framework.end(),
                               [&](const FrameworkAgg& g) { return g.finding == f && g.framework == framework; });
        if (it == by_framework.end()) it = by_framework.insert(by_framework.end(), FrameworkAgg{f, framework, {}});
        a = &it->agg;
      }
      a->count += hits;
      a->ticks += ticks;
      a->idle_after_ticks += s.idle_after_ticks.load(std::memory_order_relaxed);
      a->idle_after_count += s.idle_after_count.load(std::memory_order_relaxed);
      a->steps = std::max(a->steps, s.visits.load(std::memory_order_relaxed));
      a->sites.push_back({&s, ticks});
    };
    const FindingId f = classify_site(s);
    if (f != FindingId::none) add(f);
    const uint64_t samples = s.cpu_samples.load(std::memory_order_relaxed);
    const uint64_t wall_ns = ticks_to_ns(s.wall_ticks_sampled.load(std::memory_order_relaxed));
    if (samples >= 4 && wall_ns / samples >= 20000 &&
        s.cpu_ns_sampled.load(std::memory_order_relaxed) * 10 >= wall_ns * 8)
      add(FindingId::spin_wait);
  });
  // Process-wide findings, from counters rather than sites.
  const auto totals = std::make_unique<recorder::CounterTotals>();  // large: not on a 1 MiB thread's stack
  const recorder::CounterTotals& t = *totals;
  recorder::sum_slots(*totals);
  auto ev = [](recorder::Event e) { return recorder::g_events[static_cast<int>(e)].load(std::memory_order_relaxed); };
  // Both streams really in use: launches on the legacy stream and on a blocking one.
  if (t.legacy_stream_launches > g_thresholds.warmup_hits && t.blocking_stream_launches > g_thresholds.warmup_hits)
    agg[static_cast<int>(FindingId::legacy_stream)].count += t.legacy_stream_launches;
  // Deprecated APIs (their calls and blocked time) and the deprecated blocking-sync flags.
  uint64_t deprecated_calls = 0, deprecated_ticks = 0;
  for (size_t h = 0; h < kHookCount; ++h)
    if (kHooks[h].has(ROLE_DEPRECATED)) deprecated_calls += t.calls[h], deprecated_ticks += t.time_ns[h];
  if (deprecated_calls + ev(recorder::Event::blocking_sync_flag) > 0) {
    Agg& a = agg[static_cast<int>(FindingId::deprecated_api)];
    a.count += deprecated_calls + ev(recorder::Event::blocking_sync_flag);
    a.ticks += deprecated_ticks;
  }
  if (ev(recorder::Event::launch_blocking_env) > 0) agg[static_cast<int>(FindingId::launch_blocking)].count = 1;
  // PyTorch's own counters, read at Python's exit or after an out-of-memory (policy/rules/fragmentation.h).
  const TorchVerdicts tv = torch_verdicts();
  Agg& frag = agg[static_cast<int>(FindingId::torch_fragmentation)];
  frag.count += tv.fragmented_devices;
  if (tv.fragmented_devices > 0 && tv.fragmented_under_pressure == 0) frag.info_fix = kFragNoPressureFix;
  agg[static_cast<int>(FindingId::torch_retries)].count += tv.alloc_retries;
}

// One habit at one line is one finding: a read-back whose copy goes to pageable memory
// (cupy.asnumpy, a .cpu() of a small tensor) hits a copy site classified copy.async-from-pageable
// and a sync site classified sync.scalar-readback at the same line. The copy's site moves into
// the read-back's finding, which names both aspects (Finding::also).
void merge_pageable_readback(Agg& pageable, Agg& readback) {
  if (pageable.sites.empty() || readback.sites.empty()) return;
  std::vector<std::string> lines;
  for (const SiteView& v : readback.sites) lines.push_back(describe_site(*v.site));
  std::vector<SiteView> kept;
  for (const SiteView& v : pageable.sites) {
    if (std::find(lines.begin(), lines.end(), describe_site(*v.site)) == lines.end()) {
      kept.push_back(v);
      continue;
    }
    const uint64_t hits = v.site->hits.load(std::memory_order_relaxed);
    pageable.count -= std::min(pageable.count, hits);
    pageable.ticks -= std::min(pageable.ticks, v.ticks);
    readback.count += hits;
    readback.ticks += v.ticks;
    readback.sites.push_back(v);
    readback.also_pageable = true;
  }
  if (kept.empty()) pageable.count = 0;
  pageable.sites = std::move(kept);
}

void merge_same_line(std::vector<Agg>& agg, std::vector<FrameworkAgg>& by_framework) {
  merge_pageable_readback(agg[static_cast<int>(FindingId::async_pageable)], agg[static_cast<int>(FindingId::scalar_readback)]);
  for (FrameworkAgg& p : by_framework) {
    if (p.finding != FindingId::async_pageable) continue;
    for (FrameworkAgg& r : by_framework)
      if (r.finding == FindingId::scalar_readback && r.framework == p.framework) merge_pageable_readback(p.agg, r.agg);
  }
  by_framework.erase(std::remove_if(by_framework.begin(), by_framework.end(), [](const FrameworkAgg& g) { return g.agg.count == 0; }),
                     by_framework.end());
}

// The time the steady loop's device allocation sites took (cudaMalloc, cuMemAlloc: timed rows),
// outermost calls only (a runtime allocation's driver call under it has no site of its own).
uint64_t steady_alloc_ticks() {
  const uint64_t window = loop_window_ticks();
  uint64_t ticks = 0;
  recorder::for_each_site([&](const recorder::CallSite& s) {
    const HookInfo& h = hook_info(s.api);
    if (h.family == Family::memory && (h.kind == RecKind::ALLOC || h.has(ROLE_RUNTIME_ALLOC)) && !h.has(ROLE_PINNED_HOST) &&
        in_steady_loop(s, window))
      ticks += s.ticks.load(std::memory_order_relaxed);
  });
  return ticks;
}

// A site's step: the mean time between two of its visits (0 with fewer than two).
uint64_t site_step_ns(const recorder::CallSite& s) {
  const uint64_t first = s.first_hit_ticks.load(std::memory_order_relaxed);
  const uint64_t last = s.last_hit_ticks.load(std::memory_order_relaxed);
  const uint64_t visits = s.visits.load(std::memory_order_relaxed);
  return last > first && visits > 1 ? ticks_to_ns(last - first) / (visits - 1) : 0;
}

// The GPU's idle per step from NVML's idle share of the steady state (negative: not measured).
uint64_t gpu_idle_per_step(double gpu_idle_share, uint64_t step_ns) {
  return gpu_idle_share >= 0 && step_ns > 0 ? static_cast<uint64_t>(gpu_idle_share * static_cast<double>(step_ns))
                                            : kNoGpuIdle;
}

// The saving per step of a habit of row `id` (predicted_saving_ns): its row's trait decides the
// host-staged bound, and churn's price has the loop's re-allocations per step in it
// (`realloc_ticks` over its `steps`: the allocator asks the driver again for what it gave back,
// host time the fix removes beside the free's wait). The report's price and the live line's.
uint64_t saving_of(FindingId id, uint64_t blocked, uint64_t step, double gpu_idle_share, uint64_t realloc_ticks,
                   uint64_t steps) {
  const uint64_t realloc = id == FindingId::alloc_churn && steps ? ticks_to_ns(realloc_ticks) / steps : 0;
  return predicted_saving_ns(blocked, step, gpu_idle_per_step(gpu_idle_share, step),
                             finding_info(id).trait == FindingTrait::DRAINS_QUEUE_HOST_STAGED, realloc);
}

// Prices a runtime finding in the loop (docs/findings.md, "What a finding costs"): its step is
// the mean time between visits of its costliest site, its saving predicted_saving_ns per step.
// A warning whose saving is below the floor becomes info (above_warning_floor).
void price(Finding& r, const Agg& a, uint64_t loop_ticks, double gpu_idle_share, uint64_t realloc_ticks) {
  if (r.steps == 0 || a.sites.empty()) return;
  // A waiter's site (sampled: jax.device_get) has samples, no blocked time: no price, and its
  // row's severity stays (docs/findings.md).
  if (std::all_of(a.sites.begin(), a.sites.end(), [](const SiteView& v) { return v.site->sampled; })) return;
  r.loop_ns = ticks_to_ns(loop_ticks);
  r.step_ns = site_step_ns(*a.sites.front().site);
  r.saving_per_step_ns = saving_of(r.id, r.blocked_per_step_ns(), r.step_ns, gpu_idle_share, realloc_ticks, r.steps);
  if (r.severity() == Severity::warning && !above_warning_floor(r.saving_per_step_ns, r.step_ns)) {
    r.severity_override = Severity::info;
    r.exact_fix = fmt::format("below the warning floor: it would save {:.3f} ms a step ({:.1f}% of the step; "
                              "sync.warn_min_saving_us, sync.warn_min_step_share). Otherwise: {}",
                              r.saving_per_step_ns / 1e6, 100.0 * r.step_share(), r.fix());
  }
}

// Calls f(finding) for each finding: the user's first (their rows' order among equal blocked
// time, costliest first), then the frameworks' own, costliest first.
template <typename F>
void for_each_finding(F&& f) {
  std::vector<Agg> agg(static_cast<size_t>(FindingId::kCount));
  std::vector<FrameworkAgg> by_framework;
  aggregate(agg, by_framework);
  merge_same_line(agg, by_framework);
  const uint64_t loop_ticks = loop_window_ticks();
  const double gpu_idle_share = steady_gpu_idle_share();  // NVML's, for the price: the GPU's idle per step
  const uint64_t realloc_ticks = steady_alloc_ticks();    // the loop's device allocations' time, for churn's price
  auto by_ticks = [](const SiteView& x, const SiteView& y) { return x.ticks > y.ticks; };
  auto emit = [&](FindingId id, Agg& a, const std::string& framework) {
    std::sort(a.sites.begin(), a.sites.end(), by_ticks);
    Finding r{id, "", "", {}};
    r.count = a.count;
    r.blocked_ns = ticks_to_ns(a.ticks);
    r.framework = framework;
    r.severity_override = a.info_fix != nullptr ? Severity::info : finding_severity(id, framework);
    r.steps = a.steps;
    // The row's fix stays exact_fix "" (Finding::fix() gives it); a framework's or an info's reason is exact.
    if (a.info_fix != nullptr) r.exact_fix = a.info_fix;
    else if (!framework.empty()) r.exact_fix = framework_fix(framework);
    r.gpu_idle_after_ns = ticks_to_ns(a.idle_after_ticks);
    for (const SiteView& v : a.sites) r.sites.push_back({v.site, v.ticks});
    if (a.also_pageable) r.also.push_back(FindingId::async_pageable);
    price(r, a, loop_ticks, gpu_idle_share, realloc_ticks);
    f(std::move(r));
  };
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(FindingId::kCount); ++i)
    if (agg[i].count > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return agg[a].ticks > agg[b].ticks; });
  for (int i : order) emit(static_cast<FindingId>(i), agg[i], "");
  std::stable_sort(by_framework.begin(), by_framework.end(),
                   [](const FrameworkAgg& a, const FrameworkAgg& b) { return a.agg.ticks > b.agg.ticks; });
  for (FrameworkAgg& g : by_framework) emit(g.finding, g.agg, g.framework);
}

}  // namespace

void configure_sync(const Settings& s) {
  g_thresholds.call_sites = s.sites;
  g_thresholds.warmup_hits = s.sync_warmup_hits;
  g_thresholds.loop_share_pct = s.sync_loop_share;
  g_thresholds.readback_max_bytes = s.sync_readback_max_bytes;
  g_thresholds.warn_min_saving_ns = s.warn_min_saving_us * 1000;
  g_thresholds.warn_min_step_share_pct = s.warn_min_step_share;
}

SitePrice site_price(FindingId rule, const recorder::CallSite& s, double gpu_idle_share) {
  SitePrice p;
  const uint64_t visits = s.visits.load(std::memory_order_relaxed);
  if (s.sampled || visits == 0) return p;
  p.step_ns = site_step_ns(s);
  p.blocked_per_step_ns = ticks_to_ns(s.ticks.load(std::memory_order_relaxed)) / visits;
  // The table walk for the re-allocations only for churn (a live line is rare: 50 at most).
  p.saving_per_step_ns = saving_of(rule, p.blocked_per_step_ns, p.step_ns, gpu_idle_share,
                                   rule == FindingId::alloc_churn ? steady_alloc_ticks() : 0, visits);
  p.priced = true;
  return p;
}

bool above_warning_floor(uint64_t saving_per_step_ns, uint64_t step_ns) {
  if (saving_per_step_ns < g_thresholds.warn_min_saving_ns) return false;
  // No step measured (one visit's span): the share floor cannot be judged, the time floor decides.
  if (step_ns == 0) return true;
  return static_cast<unsigned __int128>(saving_per_step_ns) * 100 >=
         static_cast<unsigned __int128>(g_thresholds.warn_min_step_share_pct) * step_ns;
}

const SyncThresholds& sync_thresholds() { return g_thresholds; }

bool waiter_is_finding(const recorder::CallSite& s) {
  if (!s.sampled || s.reader == nullptr) return false;
  const uint64_t all = s.reader->waiter_visits.load(std::memory_order_relaxed);
  return s.visits.load(std::memory_order_relaxed) * kWaiterShareOf >= all;
}

FindingId classify_site(const recorder::CallSite& s) {
  const HookInfo& h = hook_info(s.api);
  const uint64_t hits = s.hits.load(std::memory_order_relaxed);
  if (hits == 0) return FindingId::none;
  const uint64_t avg_bytes = s.bytes.load(std::memory_order_relaxed) / hits;
  // A waiter's site (shim/wait_sampler.h): the main thread seen waiting at this line while another
  // thread read a few bytes back from the device for it (jax.device_get(loss)).
  if (s.sampled) return waiter_is_finding(s) ? FindingId::scalar_readback : FindingId::none;
  if (h.family == Family::sync && h.timing == Timing::BLOCKING) {
    if (s.after_readback.load(std::memory_order_relaxed) * 2 >= hits) return FindingId::scalar_readback;
    if (h.has(ROLE_DEPRECATED)) return FindingId::deprecated_api;
    return FindingId::explicit_sync;
  }
  if (h.kind == RecKind::COPY) {
    if (s.pageable.load(std::memory_order_relaxed) * 2 >= hits) return FindingId::async_pageable;
    if (h.timing == Timing::BLOCKING) {
      if (h.dir == CopyDir::D2H && avg_bytes <= g_thresholds.readback_max_bytes) return FindingId::scalar_readback;
      if (h.dir == CopyDir::H2D && avg_bytes <= kSmallH2D) return FindingId::none;
      if (h.dir == CopyDir::MEMSET) return FindingId::none;
      return FindingId::sync_copy;
    }
    return FindingId::none;
  }
  if (h.has(ROLE_PINNED_HOST)) return FindingId::pinned_in_loop;
  if (h.has(ROLE_DEVICE_FREE)) {
    // An allocator emptying its cache after an out-of-memory (torch frees every cached
    // segment and retries) is a burst at one site, not churn: alloc.torch-retries tells it.
    if (s.oom_flush.load(std::memory_order_relaxed) * 2 >= hits) return FindingId::none;
    // Frees the pool took into its cache never reached the driver: no device-wide sync.
    return s.pooled.load(std::memory_order_relaxed) * 2 >= hits ? FindingId::alloc_churn_pooled : FindingId::alloc_churn;
  }
  return FindingId::none;
}

int user_frame_index(const recorder::CallSite& s) { return user_frame_in(s.py, s.py_depth); }

std::vector<Finding> evaluate_findings() {
  std::vector<Finding> out;
  for_each_finding([&](Finding r) { out.push_back(std::move(r)); });
  return out;
}

}  // namespace cudashim::policy
