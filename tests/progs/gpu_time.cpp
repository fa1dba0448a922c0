// gpu_time: a loop through the runtime test double while the NVML double (tests/fakecuda/
// fakenvml.cpp, scripted by the harness's FAKENVML_* variables and its control API) plays
// the GPU's side; tests/preload/gpu_time.py checks what the sampler made of it.
//   host_bound   each step: a launch, then 15 ms of host work
//   sync_bound   the same with cudaDeviceSynchronize after the launch
//   xid_crash    an Xid 79 raised in the double as soon as the sampler loaded it, then SIGSEGV
//   split_sync   each step: 2 launches (FAKECUDA_KERNEL_US each), cudaDeviceSynchronize, 8 ms of host work
//   split_launch each step: 200 launches with 50 us of host time after each, a 4-byte read-back
//   split_input  each step: 4 launches, a 4-byte read-back, 2 launches, 12 ms of batch preparation
//                (tests/preload/idle_split.py: the three shapes of issue 36)
//   nocuda       no CUDA call: 1.5 s of sleep; prints "nvml mapped: yes|no" from /proc/self/maps
//                ("nocuda cupti": "cupti mapped: yes|no", for the precise mode)
// Other modes run host_bound's loop. GPU_TIME_SECONDS sets the loop's length (default 3.5).
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "../fakecuda/fakecuda_control.h"
#include "runtime_check.h"

__attribute__((noinline)) static void kernel_stub() {}

static void host_work(std::chrono::microseconds d) { std::this_thread::sleep_for(d); }

// The shapes of issue 36 (split_*), for GPU_TIME_SECONDS.
static int split_shape(const std::string& mode, double seconds) {
  void* dev = nullptr;
  CHECK_RT(cudaMalloc(&dev, 1 << 20));
  void* args[] = {nullptr};
  auto launch = [&] {
    return cudaLaunchKernel(reinterpret_cast<const void*>(&kernel_stub), dim3(1), dim3(32), args, 0, nullptr);
  };
  float loss = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    if (mode == "split_sync") {
      CHECK_RT(launch());
      CHECK_RT(launch());
      CHECK_RT(cudaDeviceSynchronize());
      host_work(std::chrono::microseconds(8000));
    } else if (mode == "split_launch") {
      for (int k = 0; k < 200; ++k) {
        CHECK_RT(launch());
        host_work(std::chrono::microseconds(50));  // a framework's dispatch of the next op
      }
      CHECK_RT(cudaMemcpy(&loss, dev, sizeof loss, cudaMemcpyDeviceToHost));  // print(f"{loss.item()}")
    } else {
      for (int k = 0; k < 4; ++k) CHECK_RT(launch());
      CHECK_RT(cudaMemcpy(&loss, dev, sizeof loss, cudaMemcpyDeviceToHost));
      for (int k = 0; k < 2; ++k) CHECK_RT(launch());
      host_work(std::chrono::microseconds(12000));  // the next batch, prepared on the host
    }
  }
  CHECK_RT(cudaFree(dev));
  return 0;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "host_bound";
  if (mode.rfind("split_", 0) == 0) {
    const char* s = std::getenv("GPU_TIME_SECONDS");
    return split_shape(mode, s ? std::atof(s) : 3.0);
  }
  if (mode == "nocuda") {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::ifstream maps("/proc/self/maps");
    std::string line;
    bool mapped = false;
    const bool cupti = argc > 2 && std::strcmp(argv[2], "cupti") == 0;  // "nocuda cupti": libcupti instead
    while (std::getline(maps, line))
      mapped = mapped || line.find(cupti ? "libcupti" : "libnvidia-ml") != std::string::npos;
    std::printf("%s mapped: %s\n", cupti ? "cupti" : "nvml", mapped ? "yes" : "no");
    return 0;
  }
  const char* secs = std::getenv("GPU_TIME_SECONDS");
  const double seconds = secs ? std::atof(secs) : 3.5;
  void* dev = nullptr;
  CHECK_RT(cudaMalloc(&dev, 1 << 20));
  void* args[] = {nullptr};
  const auto t0 = std::chrono::steady_clock::now();
  bool raised = false;
  for (;;) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (t > seconds) break;
    CHECK_RT(cudaLaunchKernel(reinterpret_cast<const void*>(&kernel_stub), dim3(1), dim3(32), args, 0, nullptr));
    if (mode == "sync_bound") CHECK_RT(cudaDeviceSynchronize());
    if (mode == "xid_crash" && !raised) {  // once the sampler has loaded NVML (the program never does)
      void* ml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
      auto raise_event = ml ? reinterpret_cast<fakenvml_raise_event_fn>(dlsym(ml, "fakenvml_raise_event")) : nullptr;
      if (raise_event != nullptr) raise_event(0, 0x8, 79);  // nvmlEventTypeXidCriticalError, Xid 79: fell off the bus
      raised = raise_event != nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(15));  // the host's own work
  }
  if (mode == "xid_crash" && !raised) return std::fprintf(stderr, "gpu_time: the sampler never loaded NVML\n"), 3;
  if (mode == "xid_crash") raise(SIGSEGV);
  void* ml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto calls = ml ? reinterpret_cast<fakenvml_call_count_fn>(dlsym(ml, "fakenvml_call_count")) : nullptr;
  std::printf("nvml samples read: %llu\n", calls ? static_cast<unsigned long long>(calls("nvmlDeviceGetSamples")) : 0ull);
  std::printf("nvml calls off the flush thread: %llu\n",
              calls ? static_cast<unsigned long long>(calls("off_flush_thread")) : 0ull);
  CHECK_RT(cudaFree(dev));
  return 0;
}
