// framework_env.cpp: applying framework settings.
#include "policy/framework_env.h"

#include <cstdlib>

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

}  // namespace cudashim::policy
