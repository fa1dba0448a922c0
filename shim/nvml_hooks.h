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

// Returns the CUDA ordinal of the device at PCI address domain:bus:device, as the driver
// numbers them in this process (CUDA_VISIBLE_DEVICES applies), or -1: no such device, or
// the driver is not initialized yet.
int cuda_ordinal_at_pci(unsigned domain, unsigned bus, unsigned device);

}  // namespace cudashim::shim
