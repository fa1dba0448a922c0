// library_log.h: what the process did with CUDA libraries and device code.
//
//   - dlopen requests (the name asked for and the caller), kept in a small
//     lock-free ring by the dlopen trampoline, so the inventory can say which
//     module's dlopen brought a library in;
//   - the callers of cuGetProcAddress that are not libcudart (a statically
//     linked CUDA runtime) and the runtime version they asked with;
//   - module loads (cuModuleLoad*, cuLibraryLoad*): what the image was, how much
//     of it serves this GPU, how long the load took and which module asked.
// The first three are written from hooks without locks or allocation; module
// loads are cold (a mutex, a bounded vector).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "catalog/hooks.h"

namespace cudashim::recorder {

// --- dlopen requests (any thread, lock-free, no allocation)
void log_dlopen(const char* file, const void* caller);

struct DlopenRequest {
  char name[256];       // as passed to dlopen (truncated)
  const void* caller;   // the return address of the dlopen call
  uint64_t seq;         // 1-based order
};
// The last requests (at most 64), oldest first.
std::vector<DlopenRequest> dlopen_requests();

// --- cuGetProcAddress callers (lock-free; the first 16 distinct calling modules,
// told apart by `module_base`, the dladdr base address of the caller's module)
void log_procaddr_caller(const void* module_base, const void* caller, int cuda_version);
struct ProcAddrCaller {
  const void* caller;
  int cuda_version;  // the highest cudaVersion it passed (e.g. 12090)
};
std::vector<ProcAddrCaller> procaddr_callers();

// --- module loads (cold)
struct ModuleLoad {
  uint64_t t_ns = 0;          // since start-up (monotonic)
  uint64_t dt_ns = 0;         // wall time of the load call
  HookId api = HookId::kCount;
  int result = 0;             // CUresult
  int sm = 0;                 // the device's compute capability (90), 0 unknown
  std::string kind;           // "fatbin", "cubin", "ptx", "file", "unknown"
  std::string path;           // cuModuleLoad / cuLibraryLoadFromFile
  std::string caller;         // the module that called the load (dladdr)
  std::string owner;          // the module whose memory holds the image (dladdr on the image: the
                              // library that owns the device code, e.g. libtorch_cuda.so registering
                              // through libcudart); "" for an image in no module (heap: NVRTC, a file read)
  // The module the findings name: the image's owner, else the caller.
  const std::string& who() const { return owner.empty() ? caller : owner; }
  std::string coverage;       // "sass", "ptx_jit", "none", "" unknown
  uint64_t bytes = 0;         // image size (as stored)
  uint64_t sass_bytes = 0;    // all cubins
  uint64_t sass_bytes_for_sm = 0;  // the cubin(s) that run on `sm`
  uint64_t ptx_bytes = 0;     // all PTX (uncompressed)
  uint64_t ptx_jit_bytes = 0;  // PTX the driver JIT-compiles for `sm`
  std::string archs;          // "sm_80 sm_90 compute_90"
  std::string origin;         // "triton" when its kernels carry Triton's names, else ""
};
void log_module_load(ModuleLoad m);

struct ModuleTotals {
  uint64_t count = 0, ns = 0, bytes = 0, sass_bytes = 0, sass_bytes_for_sm = 0, ptx_jit_bytes = 0, failed = 0;
};
ModuleTotals module_totals();
// The loads kept in detail (the first 2048) and how many were not kept.
std::vector<ModuleLoad> module_loads(uint64_t* dropped = nullptr);

// A forked child starts with empty logs.
void library_log_reset();

}  // namespace cudashim::recorder
