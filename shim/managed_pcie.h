// managed_pcie.h: the PCIe traffic of a device while managed (unified) memory is live on it,
// read from NVML on the GPU sampler's tick (shim/gpu_sampler.cpp), never on a hook's path
// (docs/managed-memory.md). The default mode's estimate; the precise mode's exact counts go
// to recorder/managed_migration.h.
#pragma once
#include "symbols/nvml_api.h"

namespace cudashim::shim {

// When `ordinal` holds live managed bytes: reads nvmlDeviceGetPcieThroughput TX and RX (NVML
// measures each over about 20 ms, so this holds the flush thread up to ~40 ms) and records a
// recorder::GpuPcieSample standing for the time since this device's previous call, with the
// live managed bytes by call site when there was traffic. Otherwise reads nothing. Flush
// thread only; a forked child starts over with managed_pcie_reset().
void managed_pcie_tick(const symbols::NvmlApi& api, symbols::NvmlDevice device, int ordinal);
void managed_pcie_reset();

}  // namespace cudashim::shim
