// sync_rules: one habit per mode, 40 steps each, through the runtime test double
// (libcudart -> cuGetProcAddress -> libcuda, as a real program): the harness
// (tests/preload/sync_rules.py) checks that each mode yields its finding, with the
// blocked time the double's settable delay implies, and that "clean" yields none.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "driver_api.h"
#include "runtime_check.h"


__attribute__((noinline)) static void kernel_stub() {}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "clean";
  constexpr int kSteps = 40;
  void* dev = nullptr;
  CHECK_RT(cudaMalloc(&dev, 1 << 20));
  std::vector<char> pageable(1 << 20, 1);
  void* pinned = nullptr;
  CHECK_RT(cudaMallocHost(&pinned, 1 << 20));
  cudaStream_t nb = nullptr, blocking = nullptr;
  CHECK_RT(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
  if (mode == "legacy") CHECK_RT(cudaStreamCreate(&blocking));
  if (mode == "deprecated") {
    // cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) reaches the driver as this call.
    using SetFlags = CUresult (*)(CUdevice, unsigned int);
    void* drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    auto set_flags = drv ? reinterpret_cast<SetFlags>(dlsym(drv, "cuDevicePrimaryCtxSetFlags_v2")) : nullptr;
    if (set_flags == nullptr || set_flags(0, CU_CTX_BLOCKING_SYNC) != CUDA_SUCCESS) return 3;
  }
  // SYNC_RULES_SITES_OFF=1: the loop runs with call sites turned off through the C API
  // (cudashim_set_call_sites), which must say they were on.
  using SetSites = int (*)(int);
  const char* off_env = std::getenv("SYNC_RULES_SITES_OFF");
  const bool sites_off = off_env != nullptr && std::strcmp(off_env, "1") == 0;
  auto set_sites = reinterpret_cast<SetSites>(dlsym(RTLD_DEFAULT, "cudashim_set_call_sites"));
  if (sites_off && (set_sites == nullptr || set_sites(0) != 1)) return 4;
  if (mode == "churn_after_oom") {  // one refused allocation first: the churn that follows is still churn
    void* huge = nullptr;
    if (cudaMalloc(&huge, size_t{1} << 50) == cudaSuccess) return 5;
  }
  float loss = 0;
  void* args[] = {nullptr};
  for (int s = 0; s < kSteps; ++s) {
    // The step's real work, the same in every mode: the host's own (26 ms: the loop spans the
    // second the live log waits for before it names a loop, sync.loop_share), a launch and an
    // async copy from pinned memory.
    usleep(26000);
    CHECK_RT(cudaLaunchKernel(reinterpret_cast<const void*>(&kernel_stub), dim3(1), dim3(32), args, 0, nb));
    CHECK_RT(cudaMemcpyAsync(dev, pinned, 4096, cudaMemcpyHostToDevice, nb));
    if (mode == "readback") {
      CHECK_RT(cudaMemcpyAsync(&loss, dev, sizeof loss, cudaMemcpyDeviceToHost, nb));
      CHECK_RT(cudaStreamSynchronize(nb));
    } else if (mode == "explicit_sync") {
      CHECK_RT(cudaDeviceSynchronize());
    } else if (mode == "churn" || mode == "churn_after_oom") {
      void* tmp = nullptr;
      CHECK_RT(cudaMalloc(&tmp, 4 << 20));
      CHECK_RT(cudaFree(tmp));
    } else if (mode == "pageable") {
      CHECK_RT(cudaMemcpyAsync(dev, pageable.data(), 1 << 20, cudaMemcpyHostToDevice, nb));
    } else if (mode == "sync_copy") {
      CHECK_RT(cudaMemcpy(pageable.data(), dev, 1 << 20, cudaMemcpyDeviceToHost));
    } else if (mode == "legacy") {
      CHECK_RT(cudaLaunchKernel(reinterpret_cast<const void*>(&kernel_stub), dim3(1), dim3(32), args, 0, blocking));
      CHECK_RT(cudaLaunchKernel(reinterpret_cast<const void*>(&kernel_stub), dim3(1), dim3(32), args, 0, nullptr));
    } else if (mode == "pinned") {
      void* h = nullptr;
      CHECK_RT(cudaMallocHost(&h, 1 << 16));
      CHECK_RT(cudaFreeHost(h));
    } else if (mode == "deprecated") {
      using Fn = cudaError_t (*)();
      auto thread_sync = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "cudaThreadSynchronize"));
      if (thread_sync) CHECK_RT(thread_sync());
      else CHECK_RT(cudaDeviceSynchronize());
    } else if (mode != "clean") {
      std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
      return 2;
    }
  }
  if (sites_off && set_sites(-1) != 0) return 4;
  // clean: one read-back at the very end, outside the loop.
  CHECK_RT(cudaMemcpyAsync(&loss, dev, sizeof loss, cudaMemcpyDeviceToHost, nb));
  CHECK_RT(cudaStreamSynchronize(nb));
  CHECK_RT(cudaFreeHost(pinned));
  CHECK_RT(cudaFree(dev));
  // How often the driver was asked what a host pointer is (the shim's pageable check, and the
  // ledger's device queries): the harness bounds it, so a check per copy is caught.
  using CallCount = uint64_t (*)(const char*);
  void* drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto call_count = drv ? reinterpret_cast<CallCount>(dlsym(drv, "fakecuda_call_count")) : nullptr;
  const unsigned long long queries = call_count ? call_count("cuPointerGetAttribute") : 0;
  std::printf("{\"mode\": \"%s\", \"steps\": %d, \"pointer_queries\": %llu}\n", mode.c_str(), kSteps, queries);
  return 0;
}
