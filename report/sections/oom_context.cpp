// oom_context.cpp: the report's "oom_context" section: the first out-of-memory's ledger
// per device, the largest block each device could still give, and the call sites holding
// the most memory then; null when there was none.
#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/oom.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_oom_context(JsonWriter& w, const ReportContext&) {
  const recorder::OomSnapshot s = recorder::oom_first();
  if (!s.taken) {
    w.null();
    return;
  }
  const recorder::OomEvent& e = s.event;
  auto o = w.object();
  w.member("api", hook_info(e.api).name);
  w.member("device", e.device);
  w.member("requested_bytes", e.requested);
  w.member("denied_by_policy", e.denied_by_policy);
  w.member("reason", e.reason ? e.reason : "");
  w.key("devices");
  {
    auto a = w.array();
    for (int i = 0; i < s.devices; ++i) {
      const recorder::OomDevice& d = s.device[i];
      auto row = w.object();
      w.member("device", d.device);
      w.member("live_bytes", d.live_bytes);
      w.member("peak_bytes", d.peak_bytes);
      w.member("in_use_bytes", d.capped_bytes);
      w.member("cached_bytes", d.cached_bytes);
      w.member("cap_bytes", d.cap);
      w.member("largest_block_bytes", d.largest_block);
      w.member("largest_block_basis", d.basis ? d.basis : "unknown");
    }
  }
  w.key("top_sites");
  auto a = w.array();
  for (int i = 0; i < s.sites; ++i) {
    const auto* site = static_cast<const recorder::CallSite*>(s.site[i].site);
    auto row = w.object();
    w.key("where");
    if (site) w.value(policy::describe_site(*site)); else w.null();
    w.key("api");
    if (site) w.value(hook_info(site->api).name); else w.null();
    w.member("bytes", s.site[i].bytes);
    w.member("count", s.site[i].count);
  }
}

}  // namespace cudashim::report
