// blocking.cpp: the report's "blocking" section: time the program's threads spent in
// blocking calls (outermost hooks only), against the wall time.
#include "recorder/clock.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_blocking(JsonWriter& w, const ReportContext& c) {
  auto o = w.object();
  w.member("blocked_ns", ticks_to_ns(c.totals.blocked_outer_ns));
  w.member("wall_ns", c.wall_ns);
  w.member("clock", clock_name());
}

}  // namespace cudashim::report
