// cupti_locate.h: where the precise mode finds libcupti, at run time, in the job's own
// environment (never a DT_NEEDED of the preload library). The order, first match wins:
//   1. a libcupti already loaded in the process (dl_iterate_phdr): the one the job uses;
//   2. next to the loaded libcudart: its own folder (nvidia/cu13/lib holds both), then the
//      nvidia-cuda-cupti wheel beside the runtime's (nvidia/cuda_runtime/lib ->
//      nvidia/cuda_cupti/lib);
//   3. $CUDA_HOME/extras/CUPTI/lib64, then /usr/local/cuda/extras/CUPTI/lib64.
// Steps 2 and 3 look for libcupti.so.<major>, the major of the CUDA runtime in use (the loaded
// libcudart's soname), else of the driver API (cuDriverGetVersion / 1000).
#pragma once
#include <string>

namespace cudashim::shim {

struct CuptiLocation {
  std::string path;      // "" when none was found
  const char* found_by;  // "already loaded in the process", "next to the loaded libcudart", ...
  std::string tried;     // every candidate, "; "-joined, with why it was not taken
  int major = 0;         // the major looked for
};

// Walks the loaded objects and the candidates above; `driver_version` is 1000*major+10*minor
// (0 when unknown). Runs on the flush thread (allocates; never on a hook's path).
CuptiLocation locate_cupti(int driver_version);

}  // namespace cudashim::shim
