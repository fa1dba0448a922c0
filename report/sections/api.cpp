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
    // Time of the calls made directly by the program: what a call made under another hooked
    // call (the runtime's cudaStreamSynchronize calls cuStreamSynchronize) spent is that outer
    // call's time already, listed under it in "inner".
    const uint64_t own = t.time_ns[h] - (t.nested_ns[h] < t.time_ns[h] ? t.nested_ns[h] : t.time_ns[h]);
    if (hi.timing == Timing::BLOCKING) w.member("blocked_ns", ticks_to_ns(own));
    if (hi.timing == Timing::TIMED) w.member("time_ns", ticks_to_ns(own));
    if (hi.kind == RecKind::COPY) w.member("bytes", t.bytes[h]);
    if (t.nested_calls[h] != 0) w.member("nested_calls", t.nested_calls[h]);
    auto is_inner = [&](size_t k) { return t.nested_calls[k] != 0 && t.outer[k] == h + 1; };
    bool any_inner = false;
    for (size_t k = 0; k < kHookCount; ++k) any_inner = any_inner || is_inner(k);
    if (any_inner) {
      w.key("inner");
      auto inner = w.object();
      for (size_t k = 0; k < kHookCount; ++k) {
        if (!is_inner(k)) continue;
        w.key(kHooks[k].name);
        auto in = w.object();
        w.member("calls", t.nested_calls[k]);
        w.member("time_ns", ticks_to_ns(t.nested_ns[k]));
      }
    }
  }
}

}  // namespace cudashim::report
