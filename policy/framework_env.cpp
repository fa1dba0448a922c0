// framework_env.cpp: applying framework settings.
#include "policy/framework_env.h"

#include <cstdlib>

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

}  // namespace cudashim::policy
