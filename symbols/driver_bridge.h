// The container's driver bridge: the kernel module comes from the host, the user-mode driver
// (libcuda) from wherever the loader finds it. The two must be the same driver release, except
// under forward compatibility (a newer libcuda from a cuda-compat package over an older kernel
// module, data-center GPUs only: https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html).
// The facts only: the preload library gathers them live, read_driver_bridge_input() from files
// for the CLI; the findings they give are policy/rules/driver.h's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>


namespace cudashim::symbols {

// An NVIDIA driver release, "580.95.05" -> {580, 95, 5}; missing parts are 0.
struct DriverVersion {
  int major = 0, minor = 0, patch = 0;
  std::string text;  // as written
  friend bool operator==(const DriverVersion& a, const DriverVersion& b) {
    return a.major == b.major && a.minor == b.minor && a.patch == b.patch;
  }
  friend bool operator<(const DriverVersion& a, const DriverVersion& b) {
    if (a.major != b.major) return a.major < b.major;
    if (a.minor != b.minor) return a.minor < b.minor;
    return a.patch < b.patch;
  }
};

// "580.95.05", "470.57.02", "550.54" -> a version; nullopt for anything else (one to three
// dot-separated numbers, at least two, the first of three digits).
std::optional<DriverVersion> parse_driver_version(std::string_view text);

// What /proc/driver/nvidia/version says about the loaded kernel module.
struct KernelModule {
  DriverVersion version;
  bool open = false;  // "Open Kernel Module" (the open-source flavour)
  std::string line;   // the NVRM line, for evidence
};

// Parses the text of /proc/driver/nvidia/version: the "NVRM version:" line, proprietary
// ("NVIDIA UNIX x86_64 Kernel Module  580.159.04  ...") or open ("NVIDIA UNIX Open Kernel
// Module for x86_64  580.95.05  Release Build ..."). nullopt when there is no such line.
std::optional<KernelModule> parse_kernel_module_version(std::string_view text);

// The driver release a libcuda file name carries: "libcuda.so.580.159.04" -> 580.159.04;
// nullopt for "libcuda.so.1", "libcuda.so" and other names.
std::optional<DriverVersion> libcuda_file_version(std::string_view file_name);

// Whether `path` lies in a forward-compatibility folder: a path component named "compat"
// (/usr/local/cuda/compat/, /usr/local/cuda-12.8/compat/lib.real/).
bool in_compat_folder(std::string_view path);

// The mount points of a /proc/self/mountinfo text (field 5, octal escapes decoded). The NVIDIA
// container runtime bind-mounts each host driver file on its own, so a libcuda that is a
// mount point came from the host.
std::vector<std::string> mount_points(std::string_view mountinfo);

// One libcuda file a process here could load.
struct LibcudaCopy {
  std::string path;       // where it was found (folder + file name)
  std::string real_path;  // symlinks resolved; its file name carries the version
  bool bind_mounted = false;  // path or real_path is a mount point: brought in from the host
  bool in_use = false;        // the copy the loader picks for libcuda.so.1 (or the process loaded)
};

struct DriverBridgeInput {
  std::optional<std::string> kernel_version_text;  // /proc/driver/nvidia/version; nullopt: absent
  std::string kernel_version_source = "/proc/driver/nvidia/version";
  std::vector<LibcudaCopy> libcuda;  // every copy seen, each real file once
  std::string nvml_driver_version;   // nvmlSystemGetDriverVersion / nvidia-smi; "" unknown
  std::string gpu_name;              // e.g. "NVIDIA H200", "NVIDIA GeForce RTX 4090"; "" unknown
};

// The libcuda.so* files (real files, each once, in folder order) in `folders`; `in_use` is the
// path the loader picks for libcuda.so.1 ("" none: then no copy is marked), `mounts` the mount
// points (mount_points()) that tell a host's bind-mounted file.
std::vector<LibcudaCopy> find_libcuda_copies(const std::vector<std::string>& folders, const std::string& in_use,
                                             const std::vector<std::string>& mounts);

// For the CLI: reads `kernel_version_path` (absent: no kernel module) and `mountinfo_path`,
// and lists libcuda.so* files (real files, each once) in `folders`; `in_use` is the path the
// loader picks for libcuda.so.1 ("" none). NVML and GPU name are left for the caller.
DriverBridgeInput read_driver_bridge_input(const std::string& kernel_version_path, const std::string& mountinfo_path,
                                           const std::vector<std::string>& folders, const std::string& in_use);

// The most bytes of the kernel module's version file read (/proc/driver/nvidia/version holds
// two lines; CUDASHIM_DRIVER_VERSION_FILE and `doctor --driver-version-file` may name another).
inline constexpr std::size_t kKernelVersionFileLimit = 64u << 10;
// The most bytes of /proc/self/mountinfo read (a node with thousands of mounts); the lines past
// it are not read.
inline constexpr std::size_t kMountinfoLimit = 4u << 20;

// The text of a small file (a /proc file), read through symbols/bounded_read.h: at most 1 MiB,
// never a FIFO or a device; nullopt when it cannot be read or is larger.
std::optional<std::string> read_small_text(const std::string& path);

}  // namespace cudashim::symbols
