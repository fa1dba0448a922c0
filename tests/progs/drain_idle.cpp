// drain_idle: the GPU idle a sync leaves until the next launch (shim/drain_idle.h), through
// the runtime test double. Each of 30 steps launches a kernel, then drains the queue
// (cudaDeviceSynchronize, or a read-back: cudaMemcpy of 4 bytes to the host) a millisecond
// after the launch, then waits
// `gap_ms` on the host (the CPU work a sync stops from overlapping) before the next step's
// launch. tests/preload/drain_idle.py checks ~gap_ms of idle per step at the sync's site.
//   drain_idle <sync|readback> <gap_ms>
#include <cuda_runtime_api.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime_check.h"

__attribute__((noinline)) static void kernel_stub() {}

// Sleeps `ms` (0: returns at once).
static void host_work(int ms) {
  if (ms <= 0) return;
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {}
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: drain_idle <sync|readback> <gap_ms>\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int gap_ms = std::atoi(argv[2]);
  constexpr int kSteps = 30;
  void* dev = nullptr;
  CHECK_RT(cudaMalloc(&dev, 4096));
  float loss = 0;
  void* args[] = {nullptr};
  for (int s = 0; s < kSteps; ++s) {
    CHECK_RT(cudaLaunchKernel(reinterpret_cast<const void*>(&kernel_stub), dim3(1), dim3(32), args, 0, nullptr));
    // Host work while the kernel is queued (not after the drain: no idle): each step takes a
    // millisecond, so that the loop spans most of the process's CUDA window even with gap 0
    // (a loop is one in time too: policy/sync_rules.h, sync.loop_share).
    host_work(1);
    if (mode == "sync") CHECK_RT(cudaDeviceSynchronize());
    else CHECK_RT(cudaMemcpy(&loss, dev, sizeof loss, cudaMemcpyDeviceToHost));
    host_work(gap_ms);
  }
  CHECK_RT(cudaFree(dev));
  std::printf("{\"mode\": \"%s\", \"steps\": %d, \"gap_ms\": %d}\n", mode.c_str(), kSteps, gap_ms);
  return 0;
}
