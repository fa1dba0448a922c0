// policy/rules/libraries.h: the library rules: the loaded set, the driver against each CUDA
// runtime, the CUDA environment variables and the device code the process loaded (rows in
// catalog/findings.def).
#pragma once
#include <string>
#include <vector>

#include "recorder/library_log.h"
#include "catalog/findings.h"
#include "symbols/loaded_libraries.h"

namespace cudashim::policy {

struct RuleInputs {
  const std::vector<symbols::LoadedLibrary>* libraries = nullptr;
  int driver_version = 0;  // cuDriverGetVersion, 0 unknown
  recorder::ModuleTotals modules;
  const std::vector<recorder::ModuleLoad>* loads = nullptr;
  // CUDA environment, as the process has it (nullptr = unset).
  const char* module_loading = nullptr;  // CUDA_MODULE_LOADING
  const char* cache_disable = nullptr;   // CUDA_CACHE_DISABLE
  const char* cache_path = nullptr;      // CUDA_CACHE_PATH
  const char* cache_maxsize = nullptr;   // CUDA_CACHE_MAXSIZE
  const char* home = nullptr;            // HOME (the default cache is ~/.nv/ComputeCache)
  uint64_t slow_load_ns = 2'000'000'000;  // module.load-slow threshold
};

// Driver vs. each loaded CUDA runtime (shared and static copies), the environment
// traps, and the module loads. Deterministic for given inputs (unit-tested).
std::vector<Finding> live_library_rules(const RuleInputs& in);

// The findings the loaded set shows (two copies of one family, two majors, the link-time stub
// libcuda, cuDNN parts from two folders), each naming the files.
std::vector<Finding> loaded_library_findings(const std::vector<symbols::LoadedLibrary>& libs);

// Versioned functions a loaded CUDA library imports and its loaded provider lacks
// (symbols::missing_versioned_imports): with lazy binding the process runs until the first
// call, which ends in "undefined symbol". One finding per importer and provider.
std::vector<Finding> missing_import_findings(const std::vector<symbols::MissingImport>& missing);

// The JIT cache size the driver uses when CUDA_CACHE_MAXSIZE is unset
// (CUDA programming guide, environment variables: 1 GiB on desktop and server
// platforms, 256 MiB on embedded ones; at most 4 GiB.)
inline constexpr uint64_t kDefaultJitCacheBytes = 1ull << 30;

}  // namespace cudashim::policy
