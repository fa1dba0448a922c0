// nvml_hooks.h: NVML's memory queries, capped like cuMemGetInfo (docs/options.md, CUDASHIM_MEM_CAP).
//
// nvmlDeviceGetMemoryInfo and nvmlDeviceGetMemoryInfo_v2 are exported (a program linked
// to libnvidia-ml gets ours first) and answered through dlsym (pynvml, torch load NVML
// with dlopen). The NVML device is matched to its CUDA ordinal by PCI address; the
// totals then come from the same ledger and cap as cuMemGetInfo. Not counted in the
// report's api table (it holds the driver and runtime rows only).
#pragma once
#include "catalog/hooks.h"  // kNvmlHooks

namespace cudashim::shim {

// Returns our wrapper for `name` once `real` (what the caller would get) is noted as
// its real function, or nullptr when `name` is not one of kNvmlHooks.
void* nvml_answer(const char* name, void* real);

}  // namespace cudashim::shim
