// Triton's own view of the CUDA toolchain: PyTorch compiles kernels at run time through Triton,
// which assembles PTX with the ptxas it bundles (triton/backends/nvidia/bin/) or the one a
// TRITON_*_PATH variable names, and links a small launcher against libcuda found its own way.
// Mirrors Triton's python/triton/knobs.py (env_nvidia_tool: the variable first, silently
// falling back to the bundled tool) and third_party/nvidia/backend/driver.py (libcuda_dirs():
// TRITON_LIBCUDA_PATH, else `/sbin/ldconfig -p` lines naming libcuda.so.1, else the
// LD_LIBRARY_PATH folders holding libcuda.so.1). The core is pure: inputs are passed in.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbols/ld_cache.h"

namespace cudashim::symbols {

// A CUDA tool's release as its own banner states it ("Cuda compilation tools, release 12.8, V12.8.93").
struct ToolVersion {
  int major = 0, minor = 0;
  std::string full;  // "12.8.93"
  std::string text;  // the banner line
};

// The first "Cuda compilation tools, release M.N, VM.N.P" in `bytes` (a tool's binary or the
// output of `ptxas --version`); nullopt when there is none.
std::optional<ToolVersion> parse_tool_version(std::string_view bytes);

// The version banner inside the executable at `path`, read without running it (mmap + search).
// nullopt when the file cannot be read or holds no banner.
std::optional<ToolVersion> read_tool_version(const std::string& path);

// Can ptxas of CUDA `major.minor` generate code for compute capability `sm`?
enum class SmSupport { yes, too_old, dropped, unknown };
struct PtxasTarget {
  SmSupport support = SmSupport::unknown;
  std::string first;  // the first CUDA release that targets sm ("12.8"); "" unknown
  std::string last;   // the last one, "" while still supported
};
// `arch_specific`: the sm_90a flavour Triton uses from sm_90 on (sm_90a needs CUDA 12.0).
PtxasTarget ptxas_target(int major, int minor, int sm, bool arch_specific = false);

// One tool Triton runs, with what its variable says.
struct TritonTool {
  std::string name;            // "ptxas", "ptxas-blackwell", "cuobjdump", "nvdisasm"
  std::string env_var;         // "TRITON_PTXAS_PATH", ...
  std::string bundled;         // triton/backends/nvidia/bin/<name>; "" when absent
  std::optional<ToolVersion> bundled_version;
  std::string override_path;   // the variable's value; "" when unset
  std::string override_problem;  // why Triton would skip it ("no such file", ...); "" when usable
  std::optional<ToolVersion> override_version;
};

struct TritonInput {
  std::string package_dir;  // .../site-packages/triton
  std::string version;      // "3.5.0"; "" unknown
  std::vector<TritonTool> tools;
  // How the launcher links libcuda: true "-l:libcuda.so.1" (newer Triton), false "-lcuda"
  // (needs an unversioned libcuda.so), nullopt unknown.
  std::optional<bool> links_libcuda_soname;
  int sm = 0;
  std::optional<std::string> libcuda_path_env;    // TRITON_LIBCUDA_PATH
  bool ldconfig_present = true;                   // Triton runs /sbin/ldconfig -p
  std::vector<std::string> cache_libcuda_paths;   // the cache entries naming libcuda.so.1
  std::string ld_library_path;
  std::vector<std::string> linker_dirs;           // where the linker looks after the -L folders
  bool driver_found = false;                      // the loader finds libcuda.so.1 for a process here
  std::function<bool(const std::string&)> file_exists;  // a regular file (or a link to one) at the path
};

// What Triton will use, as its own code would pick it: the ptxas for the input's SM, and the
// libcuda folders its libcuda_dirs() returns with, when the search or the launcher's link fails,
// why and what was tried. Its findings are policy/rules/toolchain.h's.
struct TritonToolchain {
  const TritonTool* ptxas = nullptr;      // the ptxas Triton uses for `sm` (into the input's tools)
  std::string ptxas_path;                 // the file it runs; "" none
  std::optional<ToolVersion> ptxas_version;
  std::string ptxas_var = "TRITON_PTXAS_PATH";  // the variable that would name another
  std::vector<std::string> libcuda_dirs;  // what libcuda_dirs() returns ("" entries never)
  std::string libcuda_how;                // "TRITON_LIBCUDA_PATH", "ldconfig cache", "LD_LIBRARY_PATH", "none"
  std::string libcuda_env_problem;        // what is wrong with TRITON_LIBCUDA_PATH's folder ("" nothing, or unset)
  std::string libcuda_failure;            // why Triton finds or links no libcuda; "" when it does
  std::vector<std::string> libcuda_tried; // the places the search looked, in order
};

// The toolchain Triton picks for `input`; points into `input`, which must outlive it.
TritonToolchain triton_toolchain(const TritonInput& input);

// The triton package folder `dir` stands for: `dir` itself (it holds backends/nvidia) or
// dir/triton; nullopt when neither.
std::optional<std::string> find_triton_package(const std::string& dir);

// For the CLI: the facts of the Triton package at `package_dir` (its tools and their versions,
// its version, how it links libcuda), with the TRITON_* variables read through `getenv`, the
// libcuda.so.1 entries of `cache` (nullptr: no cache), and the filesystem as probe.
TritonInput read_triton_input(const std::string& package_dir, int sm, const std::function<const char*(const char*)>& getenv,
                              const LdCache* cache, const std::string& ld_library_path,
                              const std::vector<std::string>& linker_dirs, bool driver_found);

}  // namespace cudashim::symbols
