// first_use.h: what waits for the process's first CUDA use.
//
// With the shim preloaded node-wide (/etc/ld.so.preload), every process loads it: ssh, bash,
// coreutils, Python. Those that never use CUDA must run exactly as without it, whatever the
// policy file says. So the constructor only parses the settings; what it has to say (a bad
// CUDASHIM_* value, a policy error ignored under on_invalid = "warn") and the stop of a
// malformed policy under on_invalid = "fail" (one line, exit 78) wait for the first CUDA use.
//
// That point is the first time the shim takes a real CUDA function to forward to: adopt_real()
// (shim/resolve.cpp), which every path to the driver and the runtime goes through before the
// first real call: a hooked export called directly (its real function resolved on first use),
// dlsym/dlvsym of a hooked name, cuGetProcAddress (itself a hooked export), and therefore
// cudaGetDriverEntryPoint and every libcudart, static or shared. A dlopen of libcuda or
// libcudart comes earlier but is not a use: `import torch` loads libcudart in CPU-only jobs
// (often as a DT_NEEDED library, which no dlopen hook sees), and GPU probes dlopen libcuda to
// ask whether one is there. NVML is not CUDA: monitoring agents keep running.
#pragma once
#include <atomic>

namespace cudashim::shim {

// True until the first CUDA use has been handled, when the constructor deferred something to
// it (notices, or a stop); false in the common case, and then note_cuda_use() is one relaxed load.
extern std::atomic<bool> g_first_use_pending;

// Slow path of note_cuda_use() (shim/init.cpp): prints the deferred notices once or, for a
// malformed policy under on_invalid = "fail", its one line and _exit(78) (EX_CONFIG). A second
// thread arriving meanwhile waits for that exit: it never reaches CUDA.
void first_cuda_use();

// Called where the shim is about to use CUDA for the first time (see above). Never on a hot
// path: adopt_real() runs once per ABI.
inline void note_cuda_use() {
  if (__builtin_expect(g_first_use_pending.load(std::memory_order_relaxed), 0)) first_cuda_use();
}

}  // namespace cudashim::shim
