// findings.cpp: the report's "findings" section: what the rules of policy/sync_rules.h
// found, costliest first, each with its five costliest call sites and their stacks.
#include <fmt/format.h>

#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/clock.h"
#include "report/sections/sections.h"
#include "symbols/symbolize.h"

namespace cudashim::report {
namespace {

// A native frame as a place in a file on disk ({"file", "address", "build_id", "size",
// "mtime_ns"}), or null: what `cudashim report` resolves to file:line later.
void write_frame(JsonWriter& w, const void* return_address) {
  recorder::FrameFile f;
  if (!recorder::frame_file(return_address, f)) {
    w.null();
    return;
  }
  auto o = w.object();
  w.member("file", f.path);
  w.member("address", f.address);
  w.member("build_id", f.build_id);
  w.member("size", f.size);
  w.member("mtime_ns", f.mtime_ns);
}

// The native frame policy::describe_site names (null for a Python line).
void write_where_frame(JsonWriter& w, const recorder::CallSite& s) {
  if (const void* frame = policy::site_frame(s)) write_frame(w, frame); else w.null();
}

void write_site(JsonWriter& w, const FindingSite& fs) {
  const recorder::CallSite& s = *fs.site;
  auto o = w.object();
  w.member("api", hook_info(s.api).name);
  w.member("where", policy::describe_site(s));
  w.member("count", s.hits.load(std::memory_order_relaxed));
  // A waiter's site (shim/wait_sampler.h): count is the samples of the main thread waiting at
  // this line while a thread with no Python frame read back; it has no blocked time of its own.
  w.member("sampled", s.sampled);
  w.member("steps", s.visits.load(std::memory_order_relaxed));
  w.member("blocked_ns", ticks_to_ns(fs.ticks));
  w.member("gpu_idle_after_ns", ticks_to_ns(s.idle_after_ticks.load(std::memory_order_relaxed)));
  w.member("gpu_idle_after_count", s.idle_after_count.load(std::memory_order_relaxed));
  const std::string framework = policy::site_framework(s);
  if (framework.empty()) w.key("framework"), w.null(); else w.member("framework", framework);
  w.key("python");
  {
    auto a = w.array();
    for (int k = 0; k < s.py_depth; ++k) w.value(fmt::format("{}:{} ({})", s.py[k].file, s.py[k].line, s.py[k].function));
  }
  w.key("native");
  {
    auto a = w.array();
    for (int k = 0; k < s.native_depth && k < 12; ++k) w.value(symbols::to_string(symbols::symbolize(s.native[k])));
  }
  w.key("frames");
  {
    auto a = w.array();
    for (int k = 0; k < s.native_depth && k < 12; ++k) write_frame(w, s.native[k]);
  }
  w.key("where_frame");
  write_where_frame(w, s);
}

}  // namespace

void write_findings(JsonWriter& w, const ReportContext& c) {
  auto a = w.array(json_lines(4));
  for (const Finding& f : c.findings) {
    const FindingInfo& row = finding_info(f.id);
    auto o = w.object();
    w.member("id", row.name);
    w.member("severity", severity_name(f.severity()));
    w.member("title", row.title);
    if (f.framework.empty()) w.key("framework"), w.null(); else w.member("framework", f.framework);
    w.member("count", f.count);
    w.member("blocked_ns", f.blocked_ns);
    w.member("per_call_ns", f.count ? f.blocked_ns / f.count : 0);
    // Per steady-state step (policy::in_steady_loop): a sync's cost is at least what it blocks
    // in each step it hits; 0 steps for a process-wide finding.
    w.member("steps", f.steps);
    w.member("calls_per_step", JsonFixed{f.steps ? static_cast<double>(f.count) / f.steps : 0.0, 2});
    w.member("blocked_per_step_ns", f.steps ? f.blocked_ns / f.steps : 0);
    // The GPU idle its drains left until the thread's next work (shim/drain_idle.h): what the sync
    // costs beyond its blocked time, the overlap it stopped.
    w.member("gpu_idle_after_ns", f.gpu_idle_after_ns);
    w.member("gpu_idle_after_per_step_ns", f.steps ? f.gpu_idle_after_ns / f.steps : 0);
    w.member("share_of_wall", JsonFixed{c.wall_ns ? static_cast<double>(f.blocked_ns) / c.wall_ns : 0.0, 4});
    // Its price (docs/findings.md, "What a finding costs"): the step, the loop's share it blocked,
    // and the step time the program would save without it; 0 for a process-wide finding.
    w.member("step_ns", f.step_ns);
    w.member("share_of_loop", JsonFixed{f.loop_share(), 4});
    w.member("predicted_saving_per_step_ns", f.saving_per_step_ns);
    w.member("saving_share_of_step", JsonFixed{f.step_share(), 4});
    w.key("also");
    {
      auto also = w.array();
      for (FindingId id : f.also) w.value(finding_info(id).name);
    }
    w.member("fix", f.fix());
    w.key("sites");
    auto sites = w.array();
    for (size_t i = 0; i < f.sites.size() && i < 5; ++i) write_site(w, f.sites[i]);
  }
}

}  // namespace cudashim::report
