// python_frameworks.h: the Python frameworks of an environment (torch, JAX, CuPy), read from
// their dist-info METADATA and version files: the version, the CUDA they were built for, and the
// NVIDIA wheels their METADATA pins (Requires-Dist), which turn a missing library into the exact
// pip requirement that brings it back.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace cudashim::symbols {

// One framework installed in one site-packages folder.
struct FrameworkInfo {
  std::string name;           // "torch", "jax", "cupy"
  std::string version;        // "2.10.0", "2.10.0+cu128"
  std::string cuda;           // the CUDA it was built for: "12.8", "12" (major only); "" for a CPU build or unknown
  std::string cuda_source;    // where `cuda` was read: "torch/version.py", "dist-info name (cupy_cuda12x)", ...
  std::string site_packages;  // the folder holding it
  std::vector<std::string> requires_dist;  // METADATA's Requires-Dist values, as written
};

// The frameworks installed where `paths` point: a site-packages folder, a folder inside one
// (torch/lib), or a virtual environment's root (lib/python3.*/site-packages). Each site-packages
// once; in the order torch, jax, cupy, then by folder. Files are read bounded; a missing or
// malformed METADATA leaves a field empty, never an error.
std::vector<FrameworkInfo> find_frameworks(const std::vector<std::string>& paths);

// The pip requirement `framework` pins for the library `soname` ("libnvshmem_host.so.3" ->
// "nvidia-nvshmem-cu12==3.3.20"), without its environment marker; nullopt when the library is no
// CUDA wheel's (catalog/cuda_wheels.def) or the METADATA pins no such project.
std::optional<std::string> pinned_requirement(const FrameworkInfo& framework, const std::string& soname);

// The "cuda" value of a torch/version.py text: "12.8" for `cuda: Optional[str] = '12.8'`; "" for
// `cuda = None` or no such line.
std::string torch_version_py_cuda(const std::string& text);

}  // namespace cudashim::symbols
