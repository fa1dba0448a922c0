// cupti_collector.h: the precise mode of GPU time (CUDASHIM_GPU_PRECISE=1, docs/gpu-time.md):
// CUPTI activity records of kernels, copies and memsets, from the GPU's own timestamps.
//
// Nothing of it runs on a hook's path. The flush thread's first tick (the process's first CUDA
// call started it, so a process that never touches CUDA never loads libcupti) looks for a
// CUPTI client already at work (CUDA_INJECTION64_PATH, NSYS_* / NSIGHT_* variables), finds
// libcupti (shim/cupti_locate.h), measures CUPTI's clock against the recorder's, registers
// the buffer callbacks and enables CONCURRENT_KERNEL, MEMCPY and MEMSET. Later ticks flush the
// completed buffers (cuptiActivityFlushAll(0)); the exit flushes them all (FLUSH_FORCED).
// Buffers come from a fixed pool in .bss; the completion callback turns each record into a
// recorder::GpuInterval without a lock or an allocation.
//
// The activity API needs no subscriber (cuptiSubscribe is the callback API's): cudashim never
// subscribes, so it never takes the one subscriber slot CUPTI up to 13.2 allows. A profiler
// that starts later (torch.profiler's Kineto, another tool) calls cuptiActivityRegisterCallbacks,
// cuptiActivityEnable or cuptiSubscribe; those are interposed (shim/cupti_hooks.cpp): the first
// such call from outside cudashim flushes and disables cudashim's collection, records who and
// when, and then goes through unchanged, so the profiler gets every record of its own.
#pragma once
#include "policy/settings_load.h"

namespace cudashim::shim {

// Reads gpu.precise (start-up, and a forked child).
void cupti_configure(const policy::Settings& s);

// One tick: the flush thread only (recorder::stream_add_tick).
void cupti_tick();

// The last flush, before the report is written (exit, or the signal path). Idempotent.
void cupti_finish();

// A CUPTI entry point called by the program (shim/cupti_hooks.cpp); `caller` is its return
// address, for naming the client. The first call stands cudashim aside. Any thread; not a hook's
// hot path (a profiler's set-up call).
void cupti_foreign_call(const char* entry, const void* caller);

// The real CUPTI entry point `name`: the next definition after the preload library, else the
// libcupti the precise mode loaded; nullptr when neither has one.
void* cupti_real(const char* name);

}  // namespace cudashim::shim
