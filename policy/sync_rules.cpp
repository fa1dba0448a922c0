// sync_rules.cpp: evaluating findings from the recorded call sites.
#include "policy/sync_rules.h"

#include <fmt/format.h>

#include "recorder/json_text.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "policy/fragmentation.h"
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
  uint64_t count = 0, ticks = 0;
  std::vector<SiteView> sites;
};


}  // namespace

std::string describe_site(const recorder::CallSite& s) {
  if (s.py_depth > 0) {
    const auto& f = s.py[user_frame_index(s)];
    return fmt::format("{}:{} ({})", f.file, f.line, f.function);
  }
  for (int i = 0; i < s.native_depth; ++i) {
    const auto sym = symbols::symbolize(s.native[i]);
    if (!sym.module.empty() && !symbols::is_runtime_frame(sym)) return symbols::to_string(sym);
  }
  return symbols::to_string(symbols::symbolize(s.return_address));
}

namespace {

std::string where_of(const recorder::CallSite& s) { return describe_site(s); }

// The native frame describe_site names, as a file and address (null for a Python
// line): what `cudashim report` resolves to file:line later.
std::string where_frame_json(const recorder::CallSite& s) {
  if (s.py_depth > 0) return "null";
  for (int i = 0; i < s.native_depth; ++i) {
    const auto sym = symbols::symbolize(s.native[i]);
    if (!sym.module.empty() && !symbols::is_runtime_frame(sym)) return recorder::frame_file_json(s.native[i]);
  }
  return recorder::frame_file_json(s.return_address);
}

void aggregate(Agg (&agg)[static_cast<int>(FindingId::kCount)]) {
  recorder::for_each_site([&](const recorder::CallSite& s) {
    const uint64_t hits = s.hits.load(std::memory_order_relaxed);
    if (hits <= g_thresholds.warmup_hits) return;
    const FindingId f = classify_site(s);
    const uint64_t ticks = s.ticks.load(std::memory_order_relaxed);
    if (f != FindingId::none) {
      Agg& a = agg[static_cast<int>(f)];
      a.count += hits;
      a.ticks += ticks;
      a.sites.push_back({&s, ticks});
    }
    const uint64_t samples = s.cpu_samples.load(std::memory_order_relaxed);
    const uint64_t wall_ns = ticks_to_ns(s.wall_ticks_sampled.load(std::memory_order_relaxed));
    if (samples >= 4 && wall_ns / samples >= 20000 &&
        s.cpu_ns_sampled.load(std::memory_order_relaxed) * 10 >= wall_ns * 8) {
      Agg& a = agg[static_cast<int>(FindingId::spin_wait)];
      a.count += hits;
      a.ticks += ticks;
      a.sites.push_back({&s, ticks});
    }
  });
  // Process-wide findings, from counters rather than sites.
  static recorder::CounterTotals t;
  recorder::sum_slots(t);
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
  // PyTorch's own counters, read at Python's exit or after an out-of-memory (policy/fragmentation.h).
  const TorchVerdicts tv = torch_verdicts();
  agg[static_cast<int>(FindingId::torch_fragmentation)].count += tv.fragmented_devices;
  agg[static_cast<int>(FindingId::torch_retries)].count += tv.alloc_retries;
}

template <typename F>
void for_each_finding(uint64_t wall_ns, F&& f) {
  static Agg agg[static_cast<int>(FindingId::kCount)];
  for (auto& a : agg) a = Agg{};
  aggregate(agg);
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(FindingId::kCount); ++i)
    if (agg[i].count > 0) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return agg[a].ticks > agg[b].ticks; });
  for (int i : order) {
    Agg& a = agg[i];
    std::sort(a.sites.begin(), a.sites.end(), [](const SiteView& x, const SiteView& y) { return x.ticks > y.ticks; });
    f(static_cast<FindingId>(i), a, ticks_to_ns(a.ticks), wall_ns);
  }
}

}  // namespace

void configure_sync(const Settings& s) {
  g_thresholds.call_sites = s.sites;
  g_thresholds.warmup_hits = s.sync_warmup_hits;
  g_thresholds.readback_max_bytes = s.sync_readback_max_bytes;
}

const SyncThresholds& sync_thresholds() { return g_thresholds; }

FindingId classify_site(const recorder::CallSite& s) {
  const HookInfo& h = hook_info(s.api);
  const uint64_t hits = s.hits.load(std::memory_order_relaxed);
  if (hits == 0) return FindingId::none;
  const uint64_t avg_bytes = s.bytes.load(std::memory_order_relaxed) / hits;
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

int user_frame_index(const recorder::CallSite& s) {
  for (int i = 0; i < s.py_depth; ++i) {
    const char* f = s.py[i].file;
    if (std::strstr(f, "/site-packages/") || std::strstr(f, "/dist-packages/") || std::strncmp(f, "<frozen", 7) == 0 ||
        std::strstr(f, "/lib/python3"))
      continue;
    return i;
  }
  return 0;
}

std::string findings_report_json(uint64_t wall_ns) {
  std::string out = "  \"findings\": [";
  bool first = true;
  for_each_finding(wall_ns, [&](FindingId f, const Agg& a, uint64_t blocked_ns, uint64_t wall) {
    const FindingInfo& row = finding_info(f);
    out += fmt::format("{}\n    {{\"id\": {}, \"severity\": \"{}\", \"title\": {}, \"count\": {}, \"blocked_ns\": {}, "
                       "\"per_call_ns\": {}, \"share_of_wall\": {:.4f}, \"fix\": {}, \"sites\": [",
                       first ? "" : ",", json_str(row.name), severity_name(row.severity), json_str(row.title), a.count,
                       blocked_ns, a.count ? blocked_ns / a.count : 0, wall ? static_cast<double>(blocked_ns) / wall : 0.0,
                       json_str(row.fix));
    first = false;
    for (size_t i = 0; i < a.sites.size() && i < 5; ++i) {
      const recorder::CallSite& s = *a.sites[i].site;
      out += fmt::format("{}{{\"api\": \"{}\", \"where\": {}, \"count\": {}, \"blocked_ns\": {}, \"python\": [",
                         i ? ", " : "", hook_info(s.api).name, json_str(where_of(s)),
                         s.hits.load(std::memory_order_relaxed), ticks_to_ns(a.sites[i].ticks));
      for (int k = 0; k < s.py_depth; ++k)
        out += fmt::format("{}{}", k ? ", " : "",
                           json_str(fmt::format("{}:{} ({})", s.py[k].file, s.py[k].line, s.py[k].function)));
      out += "], \"native\": [";
      for (int k = 0; k < s.native_depth && k < 12; ++k)
        out += fmt::format("{}{}", k ? ", " : "", json_str(symbols::to_string(symbols::symbolize(s.native[k]))));
      out += "], \"frames\": [";
      for (int k = 0; k < s.native_depth && k < 12; ++k)
        out += fmt::format("{}{}", k ? ", " : "", recorder::frame_file_json(s.native[k]));
      out += fmt::format("], \"where_frame\": {}}}", where_frame_json(s));
    }
    out += "]}";
  });
  out += first ? "],\n" : "\n  ],\n";
  return out;
}

std::string findings_summary_text(uint64_t wall_ns) {
  std::string out;
  for_each_finding(wall_ns, [&](FindingId f, const Agg& a, uint64_t blocked_ns, uint64_t wall) {
    const FindingInfo& row = finding_info(f);
    out += fmt::format("  {:<26} {:>8} calls  {:>10.1f} ms blocked ({:>5.1f}% of wall)  {}\n", row.name, a.count,
                       blocked_ns / 1e6, wall ? 100.0 * blocked_ns / wall : 0.0,
                       a.sites.empty() ? std::string("(process-wide)") : where_of(*a.sites[0].site));
  });
  return out;
}

}  // namespace cudashim::policy
