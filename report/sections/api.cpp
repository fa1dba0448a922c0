// api.cpp: the report's "api" section: one member per hooked ABI symbol that was called.
#include "catalog/hooks.h"
#include "recorder/clock.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_api(JsonWriter& w, const ReportContext& c) {
  const recorder::CounterTotals& t = c.totals;
  auto o = w.object(json_lines(4));
  for (size_t h = 0; h < kHookCount; ++h) {
    if (t.calls[h] == 0) continue;
    const HookInfo& hi = kHooks[h];
    w.key(hi.name);
    auto row = w.object();
    w.member("family", family_name(hi.family));
    w.member("layer", hi.layer());
    w.member("calls", t.calls[h]);
    w.member("errors", t.errors[h]);
    if (t.last_error[h] != 0) w.member("last_error", t.last_error[h]);
    if (hi.timing == Timing::BLOCKING) w.member("blocked_ns", ticks_to_ns(t.time_ns[h]));
    if (hi.timing == Timing::TIMED) w.member("time_ns", ticks_to_ns(t.time_ns[h]));
    if (hi.kind == RecKind::COPY) w.member("bytes", t.bytes[h]);
  }
}

}  // namespace cudashim::report
