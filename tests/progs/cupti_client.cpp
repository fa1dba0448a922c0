// cupti_client: a program that plays torch.profiler's Kineto against the CUPTI double
// (tests/fakecuda/fakecupti.cpp, linked: a DT_NEEDED libcupti, as torch's wheels have it).
// It runs a loop of launches (each kernel FAKECUDA_KERNEL_US long, 15 ms of host work a step)
// for CLIENT_BEFORE_S seconds (default 1.5), then starts "profiling" the way Kineto does:
// cuptiActivityRegisterCallbacks, cuptiActivityEnable(CONCURRENT_KERNEL) and, with argv[1] ==
// "subscribe", cuptiSubscribe; runs the loop CLIENT_AFTER_S seconds more (default 1.5), flushes
// and prints what it received:
//   client launches while profiling: N
//   client records: M
//   client subscribe: <CUptiResult>
// tests/preload/gpu_precise.py checks M == N (the profiler got every record of its window).
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "../../shim/cupti_abi.h"
#include "runtime_check.h"

namespace cupti = cudashim::cupti;

extern "C" {
cupti::Result cuptiActivityRegisterCallbacks(cupti::BufferRequested, cupti::BufferCompleted);
cupti::Result cuptiActivityEnable(int kind);
cupti::Result cuptiActivityDisable(int kind);
cupti::Result cuptiActivityFlushAll(uint32_t flag);
cupti::Result cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid_size, cupti::Activity** record);
cupti::Result cuptiSubscribe(void** subscriber, void* callback, void* userdata);
}

__attribute__((noinline)) static void kernel_stub() {}

static std::atomic<long> g_records{0};
alignas(8) static uint8_t g_buffer[1 << 16];

static void requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = g_buffer, *size = sizeof g_buffer, *max_records = 0;
}
static void completed(void*, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  cupti::Activity* r = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == cupti::kSuccess)
    if (r->kind == cupti::kKindConcurrentKernel) g_records.fetch_add(1);
}

static long loop(double seconds) {
  void* args[] = {nullptr};
  long n = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    CHECK_RT(cudaLaunchKernel(reinterpret_cast<const void*>(&kernel_stub), dim3(1), dim3(32), args, 0, nullptr));
    ++n;
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
  }
  return n;
}

static double env_s(const char* name, double dflt) {
  const char* v = std::getenv(name);
  return v ? std::atof(v) : dflt;
}

int main(int argc, char** argv) {
  void* dev = nullptr;
  CHECK_RT(cudaMalloc(&dev, 1 << 20));
  loop(env_s("CLIENT_BEFORE_S", 1.5));
  if (cuptiActivityRegisterCallbacks(requested, completed) != cupti::kSuccess ||
      cuptiActivityEnable(cupti::kKindConcurrentKernel) != cupti::kSuccess)
    return std::fprintf(stderr, "cupti_client: CUPTI refused the client\n"), 3;
  if (argc > 1 && std::strcmp(argv[1], "subscribe") == 0) {
    void* sub = nullptr;
    std::printf("client subscribe: %d\n", cuptiSubscribe(&sub, nullptr, nullptr));
  }
  const long launched = loop(env_s("CLIENT_AFTER_S", 1.5));
  CHECK_RT(cudaDeviceSynchronize());
  cuptiActivityFlushAll(cupti::kFlushForced);
  cuptiActivityDisable(cupti::kKindConcurrentKernel);
  std::printf("client launches while profiling: %ld\nclient records: %ld\n", launched, g_records.load());
  CHECK_RT(cudaFree(dev));
  return 0;
}
