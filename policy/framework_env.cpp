// framework_env.cpp: applying framework settings, and the report's policy section.
#include "policy/framework_env.h"

#include <fmt/format.h>

#include "recorder/json_text.h"

#include <cstdlib>

#include "policy/admission.h"

namespace cudashim::policy {
namespace {

struct Mapping {
  const char* variable;
  std::string value;  // "" = the policy does not set it
};


}  // namespace

std::vector<AppliedEnv> apply_framework_env(const Settings& s) {
  std::vector<AppliedEnv> out;
  const bool force = s.framework_force;
  const Mapping mappings[] = {{"PYTORCH_CUDA_ALLOC_CONF", s.pytorch_alloc_conf},
                              {"CUDA_MODULE_LOADING", setting_word(s.module_loading)},
                              {"CUDA_CACHE_MAXSIZE", s.cache_maxsize},
                              {"CUDA_CACHE_PATH", s.cache_path}};
  for (const Mapping& m : mappings) {
    const std::string& want = m.value;
    if (want.empty()) continue;
    const char* cur = std::getenv(m.variable);
    if (cur != nullptr && !force) continue;
    if (cur != nullptr && want == cur) continue;
    out.push_back({m.variable, want, cur ? cur : "", cur != nullptr});
    setenv(m.variable, want.c_str(), 1);
  }
  return out;
}

std::string policy_report_json(const Policy& p, const std::vector<AppliedEnv>& applied) {
  std::string out = "  \"policy\": {\"mem_cap\": ";
  out += p.settings.mem_cap.set() ? json_str(p.text_of(Setting::MEM_CAP)) : "null";
  out += ", \"cap_bytes_device0\": " + std::to_string(cap_of(0));
  out += ", \"managed\": " + json_str(setting_word(p.settings.managed));
  out += ", \"managed_oversubscription_guard\": " + std::string(p.settings.managed_guard ? "true" : "false");
  out += ", \"locked\": " + std::string(p.settings.locked ? "true" : "false");
  out += ", \"sources\": {";
  bool first = true;
  for (int i = 0; i < kSettings; ++i) {
    if (p.origin[i] == "default") continue;
    out += fmt::format("{}\"{}\": {}", first ? "" : ", ", kSettingRows[i].name, json_str(p.origin[i]));
    first = false;
  }
  out += "}, \"applied_env\": [";
  for (size_t i = 0; i < applied.size(); ++i)
    out += fmt::format("{}{{\"name\": {}, \"value\": {}, \"previous\": {}, \"forced\": {}}}", i ? ", " : "",
                       json_str(applied[i].name), json_str(applied[i].value),
                       applied[i].forced ? json_str(applied[i].previous) : "null", applied[i].forced ? "true" : "false");
  out += "]},\n";
  return out;
}

}  // namespace cudashim::policy
