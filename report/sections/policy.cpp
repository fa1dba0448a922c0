// policy.cpp: the report's "policy" section: the effective memory rules, where each
// setting came from, the values refused, and the framework variables the policy set.
#include "policy/admission.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_policy(JsonWriter& w, const ReportContext& c) {
  const policy::Policy& p = *c.policy;
  auto o = w.object();
  w.key("mem_cap");
  if (p.settings.mem_cap.set()) w.value(p.text_of(Setting::MEM_CAP)); else w.null();
  w.member("cap_bytes_device0", policy::cap_of(0));
  w.member("managed", setting_word(p.settings.managed));
  w.member("managed_oversubscription_guard", p.settings.managed_guard);
  w.member("locked", p.settings.locked);
  w.key("sources");
  {
    auto s = w.object();
    for (int i = 0; i < kSettings; ++i)
      if (p.origin[i] != "default") w.member(kSettingRows[i].name, p.origin[i]);
  }
  // Values a file or the environment gave that were not taken: a locked policy refused them,
  // or they were not valid and the setting kept its value.
  w.key("refused");
  {
    auto list = w.array();
    for (const policy::Refusal& r : p.refused) {
      auto row = w.object();
      w.member("setting", kSettingRows[static_cast<int>(r.setting)].name);
      w.member("value", r.value);
      w.member("from", r.from);
      w.member("why", r.why);
      w.member("kept", r.kept);
    }
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
