// process.cpp: the report's "process" section: who ran, and for how long.
#include "report/sections/sections.h"

#include "recorder/callsites.h"
#include "recorder/own_cost.h"

namespace cudashim::report {

void write_process(JsonWriter& w, const ReportContext& c) {
  const recorder::ProcessInfo& p = c.process;
  auto o = w.object();
  w.member("pid", p.pid);
  w.member("ppid", p.ppid);
  w.key("rank");
  if (p.rank >= 0) w.value(p.rank); else w.null();
  w.member("host", p.host);
  w.member("exe", p.exe);
  w.key("argv");
  {
    auto a = w.array();
    for (const std::string& arg : p.argv) w.value(arg);
  }
  w.member("start_unix_ns", p.start_unix_ns);
  w.member("end_unix_ns", c.end_unix_ns);
  w.member("wall_ns", c.wall_ns);
  w.member("threads", c.totals.threads);
}

void write_self_cost(JsonWriter& w, const ReportContext& c) {
  const bool python = recorder::g_py_locate.load(std::memory_order_acquire) != nullptr;
  const recorder::OwnCost k = recorder::own_cost(c.totals, c.wall_ns, python);
  auto o = w.object();
  w.member("threads_cpu_ns", k.threads_cpu_ns);
  w.member("hook_calls", k.hook_calls);
  w.member("hooks_ns_estimate", k.hooks_ns);
  w.member("process_cpu_ns", k.process_cpu_ns);
  w.member("wall_ns", k.wall_ns);
  w.member("share_of_cpu_pct", JsonFixed{k.share_of_cpu_pct(), 3});
  w.member("share_of_wall_pct", JsonFixed{k.share_of_wall_pct(), 3});
  w.key("steady");
  {
    auto s = w.object();
    w.member("rounds", k.steady.rounds);
    w.member("flush_round_pct", JsonFixed{k.steady.flush_pct, 3});
    w.member("share_of_wall_pct", JsonFixed{k.steady.share_of_wall_pct, 3});
  }
  w.member("flush_cpu_ns", k.flush_cpu_ns);
  recorder::OwnPart parts[recorder::kOwnParts];
  const int n = recorder::own_parts(parts);
  w.key("parts");
  auto a = w.object();
  for (int i = 0; i < n; ++i) {
    w.key(parts[i].name);
    auto p = w.object();
    w.member("cpu_ns", parts[i].cpu_ns);
    w.member("runs", parts[i].runs);
    w.member("max_ns", parts[i].max_ns);
    w.member("wall_ns", parts[i].wall_ns);
  }
}

}  // namespace cudashim::report
