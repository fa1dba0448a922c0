// oom.cpp: the report's "oom" section: out-of-memory events, real or denied by the policy,
// with the last one's context.
#include "recorder/oom.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_oom(JsonWriter& w, const ReportContext&) {
  const recorder::OomSummary oom = recorder::oom_summary();
  auto o = w.object();
  w.member("count", oom.count);
  w.member("denied_by_policy", oom.denied);
  w.key("last");
  if (oom.count == 0) {
    w.null();
    return;
  }
  auto last = w.object();
  w.member("api", hook_info(oom.last.api).name);
  w.member("device", oom.last.device);
  w.member("requested_bytes", oom.last.requested);
  w.member("in_use_bytes", oom.last.capped_bytes);
  w.member("cap_bytes", oom.last.cap);
  w.member("denied_by_policy", oom.last.denied_by_policy);
  w.member("reason", oom.last.reason ? oom.last.reason : "");
}

}  // namespace cudashim::report
