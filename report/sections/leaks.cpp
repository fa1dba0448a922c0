// leaks.cpp: the report's "leaks" section: live allocations at exit grouped by call site
// and kind (policy/rules/leaks.h), the 20 largest groups.
#include "policy/rules/leaks.h"
#include "policy/sync_rules.h"
#include "recorder/clock.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_leaks(JsonWriter& w, const ReportContext&) {
  const policy::Leaks leaks = policy::live_leaks();
  const uint64_t now = now_ticks();
  auto o = w.object();
  w.member("live_allocations", leaks.live_allocations);
  w.member("live_bytes", leaks.live_bytes);
  w.key("by_site");
  auto a = w.array();
  for (size_t i = 0; i < leaks.by_site.size() && i < 20; ++i) {
    const policy::LeakGroup& g = leaks.by_site[i];
    auto row = w.object();
    w.key("where");
    if (g.site) w.value(policy::describe_site(*g.site)); else w.null();
    w.key("api");
    if (g.site) w.value(hook_info(g.site->api).name); else w.null();
    w.member("kind", mem_kind_name(g.kind));
    w.member("count", g.count);
    w.member("bytes", g.bytes);
    w.member("oldest_age_ns", ticks_to_ns(now > g.oldest_ticks ? now - g.oldest_ticks : 0));
  }
}

}  // namespace cudashim::report
