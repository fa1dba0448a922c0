// gpu_sampler.h: GPU utilization and health from NVML, read on the shim's flush thread
// (recorder/event_stream.h), never on a hook's path (docs/gpu-time.md).
//
// libnvidia-ml.so.1 is dlopen'd on the flush thread's first tick: the flush thread starts at the
// process's first CUDA call, so a process that never touches CUDA never loads NVML. Each
// tick (about once a second) it reads, for every NVML device that is one of this process's
// CUDA devices (matched by PCI address): the utilization samples since the last tick
// (device-wide and this process's), a health sample (clocks, clock-event reasons,
// temperature, power and its limit, memory used), and the pending Xid and double-bit ECC
// events (nvmlEventSetWait_v2 with a timeout of 0: the thread never blocks in NVML).
#pragma once
#include "policy/settings_load.h"

namespace cudashim::shim {

// Reads gpu.sampling and the gpu_time thresholds (start-up, and a forked child).
void gpu_sampler_configure(const policy::Settings& s);

// One tick: runs on the flush thread only (recorder::stream_add_tick).
void gpu_sampler_tick();

}  // namespace cudashim::shim
