// policy/rules/libraries.h: the library rules: the loaded set, the driver against each CUDA
// runtime, the CUDA environment variables and the device code the process loaded (rows in
// catalog/findings.def).
#pragma once
#include <optional>
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

// One file of a CUDA-family library, as a process loaded it (the live inventory) or as the
// doctor found it on disk: what the library rules below judge, alike for both.
struct LibraryCopy {
  std::string path;      // as found or loaded
  std::string real;      // symlinks resolved: two names of one file are one copy ("" = path)
  std::string family;    // catalog/cuda_libraries.def: "cudart", "cudnn"
  std::string stem;      // the library within the family: "cudart", "cudnn_ops"
  int major = -1;        // -1 unknown: such a copy is left out
  std::string evidence;  // the line that names it in a finding
  bool vendor = false;   // inside NVIDIA's or a framework's own package (the user installs, never edits)
  bool bundled = false;  // inside a framework's own package (Triton's cupti), not one of NVIDIA's wheels
};

// Where the copies were seen together.
struct CopiesSeen {
  enum Where { in_process, in_scanned_set } where = in_process;
  std::string process;  // in_process: the file whose load tree they form; "" this process
};

// Two majors of one family (library.mixed-majors-in-process: one process calls into both, an
// error; library.mixed-majors: side by side in the scanned set, a warning, info when at most one
// major lies outside the frameworks' bundled copies), and two files of one library and major
// (library.duplicate; info when all lie in NVIDIA's or the frameworks' packages). In the
// order: the families, then the libraries, each sorted by name.
std::vector<Finding> library_copy_findings(const std::vector<LibraryCopy>& copies, const CopiesSeen& seen);

// The link-time stub libcuda (lib64/stubs/libcuda.so): loading it instead of the driver makes
// every CUDA call fail (driver.stub-libcuda).
bool is_stub_libcuda(const std::string& path);

// cuDNN's main library (libcudnn.so.N) loads its parts (libcudnn_ops.so.N, ...) by name.
struct CudnnHome {
  std::string folder;        // the main library's real folder
  std::string file_version;  // its version from its file name ("9.1.0"); "" unknown
};
struct CudnnPart {
  std::string folder;   // the part's real folder
  std::string version;  // from its real file name; "" unknown
};
// Whether the parts come from elsewhere than the main library: another folder, or another
// version when both file names carry a full one ("9.1.0", not "9") (library.cudnn-split-folders).
bool cudnn_split(const CudnnHome& home, const std::vector<CudnnPart>& parts);

// library.cudnn-split-folders for the scanned libcudnn at `path` (doctor), its parts' lines as
// evidence; nothing when cudnn_split says the parts come from its own folder and version.
std::optional<Finding> scanned_cudnn_split(const std::string& path, const CudnnHome& home, const std::vector<CudnnPart>& parts,
                                           std::vector<std::string> evidence);

// The findings the set this process loaded shows (the link-time stub libcuda, and through the
// rules above: two majors, two copies of one library, cuDNN parts from elsewhere), each naming
// the files.
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
