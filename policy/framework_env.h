// framework_env.h: framework and driver settings applied at load time, before the
// framework reads them (PYTORCH_CUDA_ALLOC_CONF is read when torch first touches
// CUDA; CUDA_MODULE_LOADING and the JIT cache variables when the driver loads).
#pragma once
#include <string>
#include <vector>

#include "policy/settings_load.h"

namespace cudashim::policy {

struct AppliedEnv {
  std::string name, value, previous;  // previous: the job's own value ("" when unset)
  bool forced;                        // the job had its own value and the policy replaced it
};

// Sets the framework variables the policy names: only where the job left them
// unset, unless framework.force. Returns what it changed. Call once, single-threaded.
std::vector<AppliedEnv> apply_framework_env(const Settings& s);

}  // namespace cudashim::policy
