// process.cpp: the report's "process" section: who ran, and for how long.
#include "report/sections/sections.h"

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

}  // namespace cudashim::report
