// `cudashim doctor`: offline checks of binaries, libraries, folders and Python environments,
// with no GPU and no driver needed. What the loader will pick and why, versioned-symbol
// shortfalls, fatbin coverage of the GPU, duplicate or mixed CUDA libraries.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "symbols/cuda_library.h"
#include "symbols/fatbin.h"
#include "catalog/findings.h"
#include "symbols/driver_bridge.h"
#include "symbols/loader_search.h"
#include "symbols/triton_toolchain.h"
#include "symbols/python_frameworks.h"
#include "tools/doctor_headline.h"

namespace cudashim::tools {

struct DoctorOptions {
  std::vector<std::string> paths;  // files, folders, site-packages folders
  bool json = false;
  std::string sm;                  // "90", "9.0", "sm_90"; "" = from nvidia-smi, else 90 with a note
  std::optional<std::string> ld_library_path;  // nullopt = the environment's LD_LIBRARY_PATH
  std::string ld_cache_path = "/etc/ld.so.cache";
  // The kernel module's version file and the mount table (the driver bridge checks); tests
  // point them at crafted files.
  std::string driver_version_file = "/proc/driver/nvidia/version";
  std::string mountinfo_file = "/proc/self/mountinfo";
  int jobs = 0;  // files examined at once; 0 = one per core (at most 16)
  bool verbose = false;        // also show the notes inside NVIDIA's and the frameworks' own files
  std::string driver_version;  // "535.104.05": the driver to check against; "" = the version file's
};

// A finding of the scan (its vendor_internal and exact_fix are the doctor's table row's too).
using DoctorFinding = Finding;

// What doctor sees of the host besides the scanned files: the driver bridge and Triton's
// environment. Every field is optional; tests fill them with crafted values.
struct HostFacts {
  std::optional<std::string> kernel_version_text;  // /proc/driver/nvidia/version; nullopt: no module
  std::string kernel_version_source = "/proc/driver/nvidia/version";
  std::string mountinfo_text;
  std::string nvml_driver_version;  // nvidia-smi's driver_version; "" unknown
  std::string gpu_name;             // nvidia-smi's name; "" unknown
  std::vector<std::string> driver_folders;  // more folders to look for libcuda copies (compat/ ones)
  std::function<const char*(const char*)> getenv;  // TRITON_* variables; empty = none set
  int jobs = 0;                     // as DoctorOptions::jobs
  std::string driver_version;       // --driver-version: overrides the kernel module's version file
};

// A version and where it was read from.
struct LibraryVersion {
  std::string version;  // "12.2.0.103", "12" (major only), "" when unknown
  std::string source;   // "file name", "wheel RECORD (nvidia_cusparse_cu12)", "soname", ...
};

// What doctor learned about one scanned ELF file.
struct LibraryReport {
  std::string path;       // as scanned (the alias named like the soname when there are several)
  std::string real_path;  // symlinks resolved
  std::string soname;
  std::optional<symbols::CudaLibraryName> cuda;  // set for a CUDA-family library
  LibraryVersion version;
  std::vector<std::string> identical_copies;  // other paths with the same size and content, merged into this row
  std::vector<symbols::Resolution> cuda_needed;  // how the loader finds its CUDA-family DT_NEEDED
  std::optional<symbols::Coverage> coverage;     // of the .nv_fatbin the CUDA runtime registers
  std::optional<symbols::Coverage> embedded_coverage;  // of fatbins embedded elsewhere (cuFFT's)
  std::size_t fatbin_entries = 0;
  std::vector<std::string> fatbin_arch_counts;   // "sm_90 221", "compute_120 287", "embedded sm_90 393", ... numeric order
  int fatbin_embedded_containers = 0;            // containers found outside .nv_fatbin
  std::optional<symbols::FatbinBytes> fatbin_bytes;  // bytes of every container, embedded ones included
  std::optional<symbols::FatbinBytes> fatbin_registered_bytes;  // .nv_fatbin only (what cuobjdump lists)
};

// A Triton install found in a scanned site-packages, and the toolchain it would use.
struct TritonSummary {
  std::string package_dir, version;
  std::string ptxas, ptxas_version;  // the ptxas for the GPU and its release ("12.8.93"); "" none/unknown
  std::vector<std::string> libcuda_dirs;
  std::string libcuda_how;
};

// The kernel module and the user-mode driver, as doctor found them.
struct DriverSummary {
  std::string kernel_module;  // "580.95.05"; "" when no module is loaded
  bool open_module = false;
  std::string libcuda_in_use;  // the loader's libcuda.so.1 (real path); "" none
  std::vector<std::string> libcuda_copies;  // "path (version) [bind-mounted]"
};

struct DoctorReport {
  int sm = 90;
  std::string sm_source;  // "--sm", "nvidia-smi", "assumed"
  std::vector<LibraryReport> libraries;
  std::vector<TritonSummary> tritons;
  DriverSummary driver;
  Headline headline;  // the framework, the CUDA it was built for, the driver it needs and the one present
  std::vector<DoctorFinding> findings;  // sorted: errors, warnings, info (vendor-internal ones count as info)
  // 2 with an error, 1 with a warning, else 0.
  int exit_code() const;
};

// Called before each file is examined (i from 0, of n).
using DoctorProgress = std::function<void(std::size_t i, std::size_t n, const std::string& path)>;

// The ELF files `paths` stand for: files as given, folders walked recursively (*.so* and
// executables), site-packages folders narrowed to torch/lib, nvidia/*/lib and triton/backends/nvidia/lib. Paths that do
// not exist or are not ELF land in `problems`. Sorted, one per real file.
std::vector<std::string> collect_elf_files(const std::vector<std::string>& paths, std::vector<std::string>& problems);

// The version of a CUDA-family library: from its full file name (libcudart.so.12.9.79), the
// wheel RECORD that lists it, its symbols (nvJitLink's API level), else its soname's major.
LibraryVersion library_version(const std::string& path, const std::string& real_path,
                               const symbols::CudaLibraryName& name, const symbols::ElfFacts& facts);

// Runs every check on `paths` for a GPU of compute capability `sm`. Never throws.
// The per-file work (ELF facts, fatbins) runs on `host.jobs` threads; the report is the same
// for any number of them.
DoctorReport diagnose(const std::vector<std::string>& paths, int sm, const std::string& sm_source,
                      const symbols::SearchEnv& env, const DoctorProgress& progress = {}, const HostFacts& host = {});

// The human report: the headline, findings grouped by severity, each with its fix, then the
// libraries. Vendor-internal findings only when `verbose` (else one line counts them).
std::string render_doctor_text(const DoctorReport& report, bool color, bool verbose = false);

// The JSON report (schema: {"headline", "sm", "sm_source", "summary", "findings", "libraries"};
// every finding, vendor-internal ones with "vendor_internal": true and severity "info").
std::string render_doctor_json(const DoctorReport& report);

// A compute capability as doctor takes it: "90", "9.0", "sm_90", "sm_90a", "compute_90" -> 90;
// "12.0" -> 120. Returns 0 for anything else.
int parse_compute_capability(const std::string& text);

// `cudashim doctor`: prints the report; returns the exit code (0 clean, 1 warnings, 2 errors,
// 3 for bad input: a path that does not exist or is no file or folder (a FIFO is refused from
// its stat, never opened), a bad --sm or --driver-version).
int run_doctor(const DoctorOptions& options);

}  // namespace cudashim::tools
