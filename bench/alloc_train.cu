// alloc_train.cu: an allocation-heavy raw CUDA program for the performance table (issue 9):
// what a hand-written training loop without a caching allocator does. Each step allocates
// 16 buffers of 64 KiB .. 8 MiB with cudaMalloc, fills each with a kernel, reduces one
// value of each into a small result, reads that back (one 64-byte cudaMemcpy, as a loss
// log does) and frees the buffers with cudaFree, which waits for the device.
// Prints ONE JSON line: median, p10 and p90 step time in milliseconds.
//   alloc_train [--steps N] [--warmup N]
// Build: nvcc -O2 -arch=sm_90 -o alloc_train alloc_train.cu

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda_check.h"

__global__ void fill(float* p, size_t n, float v) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = v + static_cast<float>(i & 7);
}
__global__ void pick(const float* p, float* out, int slot) { out[slot] = p[0]; }

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

int main(int argc, char** argv) {
  int steps = 300, warmup = 30;
  for (int i = 1; i < argc; ++i) {
    const bool has = i + 1 < argc;
    if (has && !std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[++i]);
    else if (has && !std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "alloc_train: bad argument '%s'; usage: [--steps N] [--warmup N]\n", argv[i]);
      return 2;
    }
  }
  if (steps < 1 || warmup < 0) {
    std::fprintf(stderr, "alloc_train: --steps must be at least 1 and --warmup at least 0\n");
    return 2;
  }
  constexpr int kBuffers = 16;
  const size_t kSizes[] = {64u << 10, 256u << 10, 1u << 20, 8u << 20};
  float* result = nullptr;
  CHECK(cudaMalloc(&result, kBuffers * sizeof(float)));
  float host[kBuffers];
  std::vector<double> ms;
  for (int step = 0; step < warmup + steps; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    float* bufs[kBuffers];
    for (int b = 0; b < kBuffers; ++b) {
      const size_t bytes = kSizes[b % 4];
      CHECK(cudaMalloc(&bufs[b], bytes));
      fill<<<64, 256>>>(bufs[b], bytes / sizeof(float), static_cast<float>(step));
      pick<<<1, 1>>>(bufs[b], result, b);
    }
    CHECK(cudaMemcpy(host, result, sizeof host, cudaMemcpyDeviceToHost));
    for (int b = 0; b < kBuffers; ++b) CHECK(cudaFree(bufs[b]));
    CHECK(cudaGetLastError());
    const auto t1 = std::chrono::steady_clock::now();
    if (host[0] != static_cast<float>(step)) {
      std::fprintf(stderr, "alloc_train: step %d read back %g, expected %d\n", step, host[0], step);
      return 1;
    }
    if (step >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  CHECK(cudaFree(result));
  std::printf("{\"bench\": \"alloc_train\", \"steps\": %zu, \"warmup\": %d, \"median_ms\": %.4f, \"p10_ms\": %.4f, "
              "\"p90_ms\": %.4f}\n", ms.size(), warmup, percentile(ms, 0.5), percentile(ms, 0.1), percentile(ms, 0.9));
  return 0;
}
