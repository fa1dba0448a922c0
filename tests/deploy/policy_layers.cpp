// policy_layers ADMIN [NAME=VALUE...]: loads a policy the way the shim does, with ADMIN in
// the place of /etc/cudashim/policy.toml and NAME=VALUE as the only environment
// (CUDASHIM_POLICY=FILE names the user's file), so that a deployment's layers (an
// administrator's locked file, a job's own file, its CUDASHIM_* variables) can be checked
// together without writing /etc. Prints the errors, the warnings, "stop: yes" or "stop: no"
// (whether a process about to use CUDA would stop: errors and on_invalid = fail) and the
// effective policy.
// Exit: 78 on errors (a job would stop), 1 on warnings (a value was refused or ignored), else 0.
#include <cstdio>
#include <map>
#include <string>

#include "policy/settings_load.h"

namespace {
std::map<std::string, std::string> g_env;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: policy_layers ADMIN_FILE [NAME=VALUE...]\n");
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    const std::string kv = argv[i];
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "policy_layers: '%s' is not NAME=VALUE\n", argv[i]);
      return 2;
    }
    g_env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  using namespace cudashim::policy;
  const LoadResult r = load_policy(
      [](const char* name) -> const char* {
        const auto it = g_env.find(name);
        return it == g_env.end() ? nullptr : it->second.c_str();
      },
      argv[1]);
  for (const auto& e : r.errors) std::printf("error: %s\n", e.c_str());
  for (const auto& w : r.warnings) std::printf("warning: %s\n", w.c_str());
  std::printf("stop: %s\n", r.stop() ? "yes" : "no");
  std::printf("%s", describe(r.policy).c_str());
  if (!r.errors.empty()) return 78;
  return r.warnings.empty() ? 0 : 1;
}
