// managed_paging: managed buffers touched by the host and the "GPU" in turn, through the
// runtime test double, while the NVML double (FAKENVML_PCIE_TX_KBPS / _RX_KBPS, set by the
// harness) plays the bus; tests/preload/managed_paging.py checks what the sampler made of it.
//   paging     one 64 MiB managed buffer (the line marked LINE:managed), each step: the host
//              writes it, a kernel is launched on it, 15 ms of host work
//   two_sites  the same with two buffers from two lines, 48 MiB (LINE:big) and 16 MiB (LINE:small)
//   device     the same loop on a cudaMalloc buffer: no managed memory
// MANAGED_SECONDS sets the loop's length (default 4.5).
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "runtime_check.h"

__attribute__((noinline)) static void kernel_stub() {}

__attribute__((noinline)) static int managed(void** p, size_t bytes) {
  CHECK_RT(cudaMallocManaged(p, bytes, cudaMemAttachGlobal));  // LINE:managed
  return 0;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "paging";
  const char* secs = std::getenv("MANAGED_SECONDS");
  const double seconds = secs ? std::atof(secs) : 4.5;
  void* bufs[2] = {nullptr, nullptr};
  size_t sizes[2] = {64u << 20, 0};
  if (mode == "device") {
    CHECK_RT(cudaMalloc(&bufs[0], sizes[0]));
  } else if (mode == "two_sites") {
    sizes[0] = 48u << 20, sizes[1] = 16u << 20;
    // Start-up first (the runtime, the shim's background thread and its first tick), so that no
    // tick falls between the two allocations: one did in CI under load, and gave the 48 MiB
    // buffer a reading of its own (3.8:1 instead of 3:1).
    CHECK_RT(cudaFree(nullptr));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_RT(cudaMallocManaged(&bufs[0], sizes[0], cudaMemAttachGlobal));  // LINE:big
    CHECK_RT(cudaMallocManaged(&bufs[1], sizes[1], cudaMemAttachGlobal));  // LINE:small
  } else {
    if (managed(&bufs[0], sizes[0]) != 0) return 1;
  }
  void* args[] = {nullptr};
  const auto t0 = std::chrono::steady_clock::now();
  for (int step = 0;; ++step) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) break;
    for (int b = 0; b < 2; ++b)  // the host's touch (the fake's device memory is host memory)
      if (bufs[b] != nullptr) std::memset(bufs[b], step & 0xff, sizes[b] / 64);
    CHECK_RT(cudaLaunchKernel(reinterpret_cast<const void*>(&kernel_stub), dim3(1), dim3(32), args, 0, nullptr));
    CHECK_RT(cudaStreamSynchronize(nullptr));  // the GPU's touch, before the host writes again
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
  }
  for (void* p : bufs)
    if (p != nullptr) CHECK_RT(cudaFree(p));
  std::printf("managed_paging %s: done\n", mode.c_str());
  return 0;
}
