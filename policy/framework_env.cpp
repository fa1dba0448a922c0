// framework_env.cpp: applying framework settings, and the report's policy section.
#include "policy/framework_env.h"

#include <fmt/format.h>

#include "recorder/json_text.h"

#include <cstdlib>

#include "policy/admission.h"

namespace cudashim::policy {
namespace {

struct Mapping {
  Setting setting;
  const char* variable;
};
constexpr Mapping kMappings[] = {{Setting::PYTORCH_ALLOC_CONF, "PYTORCH_CUDA_ALLOC_CONF"},
                                 {Setting::MODULE_LOADING, "CUDA_MODULE_LOADING"},
                                 {Setting::CACHE_MAXSIZE, "CUDA_CACHE_MAXSIZE"},
                                 {Setting::CACHE_PATH, "CUDA_CACHE_PATH"}};


}  // namespace

std::vector<AppliedEnv> apply_framework_env(const Policy& p) {
  std::vector<AppliedEnv> out;
  const bool force = p.flag(Setting::FRAMEWORK_FORCE);
  for (const Mapping& m : kMappings) {
    const std::string& want = p.get(m.setting);
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
  out += p.get(Setting::MEM_CAP).empty() ? "null" : json_str(p.get(Setting::MEM_CAP));
  out += ", \"cap_bytes_device0\": " + std::to_string(cap_of(0));
  out += ", \"managed\": " + json_str(p.get(Setting::MANAGED));
  out += ", \"managed_oversubscription_guard\": " + std::string(p.flag(Setting::MANAGED_GUARD) ? "true" : "false");
  out += ", \"locked\": " + std::string(p.flag(Setting::LOCKED) ? "true" : "false");
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
