// policy.cpp: the report's "policy" section: the effective memory rules, where each
// setting came from, and the framework variables the policy set.
#include "policy/admission.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_policy(JsonWriter& w, const ReportContext& c) {
  using policy::Setting;
  const policy::Policy& p = *c.policy;
  auto o = w.object();
  w.key("mem_cap");
  if (p.get(Setting::MEM_CAP).empty()) w.null(); else w.value(p.get(Setting::MEM_CAP));
  w.member("cap_bytes_device0", policy::cap_of(0));
  w.member("managed", p.get(Setting::MANAGED));
  w.member("managed_oversubscription_guard", p.flag(Setting::MANAGED_GUARD));
  w.member("locked", p.flag(Setting::LOCKED));
  w.key("sources");
  {
    auto s = w.object();
    for (int i = 0; i < policy::kSettings; ++i)
      if (p.origin[i] != "default") w.member(policy::kSettingRows[i].name, p.origin[i]);
  }
  w.key("applied_env");
  auto a = w.array();
  for (const policy::AppliedEnv& e : *c.applied) {
    auto row = w.object();
    w.member("name", e.name);
    w.member("value", e.value);
    w.key("previous");
    if (e.forced) w.value(e.previous); else w.null();
    w.member("forced", e.forced);
  }
}

}  // namespace cudashim::report
