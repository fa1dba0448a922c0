// pool_bench.cu: what an alloc+free pair costs with cudashim's caching pool vs. without it
// (and vs. the stream-ordered allocator), 4 KiB .. 64 MiB, on a real GPU.
//
// Build:  nvcc -O2 -o pool_bench pool_bench.cu -lcuda  (-arch=sm_90 as well skips the PTX JIT on an H200)
// Run:    LD_PRELOAD=.../libcudashim.so ./pool_bench [--rounds 5] [--pairs 200]
//
// The parent runs itself as a child per round, alternating CUDASHIM_POOL=0 (raw) and
// CUDASHIM_POOL=1 (pool): A B A B ..., so drift (clocks, other tenants) hits both alike. Each
// child times `pairs` pairs per size in batches of kBatch (one clock read per batch, not per
// pair: a clock read is 20-40 ns, a pooled pair not much more), after a warm-up, and prints
// the median per-pair ns over the batches for six loops: the driver's cuMemAlloc+cuMemFree
// (what the pool's goal is stated against); cudaMalloc+cudaFree; that pair with a tiny kernel
// on the allocated block in between (the pool then records events at every free);
// cudaMallocAsync+cudaFreeAsync on the legacy stream, bare and with the kernel; and the
// kernel launch alone (what the "+kernel" rows pay for the launch itself). The parent prints
// the median over rounds, side by side, with the pool/raw ratio and raw/pool speed-up.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cuda_check.h"

__global__ void touch(char* p) { p[threadIdx.x] = 1; }

const size_t kSizes[] = {4u << 10, 16u << 10, 64u << 10, 256u << 10, 1u << 20, 4u << 20, 16u << 20, 64u << 20};
const char* kLoops[] = {"cuMemAlloc pair", "cudaMalloc pair", "pair+kernel", "async pair", "async+kernel",
                        "kernel only"};
constexpr int kLoopCount = 6;
constexpr int kBatch = 20;  // pairs per timed batch

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double now_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Child: prints "loop size median_ns" lines.
// One pair of loop `loop` on `bytes`.
inline void one_pair(int loop, size_t bytes, void* scratch) {
  void* p = nullptr;
  switch (loop) {
    case 0: {
      CUdeviceptr d = 0;
      CHECK_CU(cuMemAlloc(&d, bytes));
      CHECK_CU(cuMemFree(d));
      break;
    }
    case 1:
    case 2:
      CHECK(cudaMalloc(&p, bytes));
      if (loop == 2) touch<<<1, 32>>>(static_cast<char*>(p));
      CHECK(cudaFree(p));
      break;
    case 3:
    case 4:
      CHECK(cudaMallocAsync(&p, bytes, nullptr));
      if (loop == 4) touch<<<1, 32>>>(static_cast<char*>(p));
      CHECK(cudaFreeAsync(p, nullptr));
      break;
    default:
      touch<<<1, 32>>>(static_cast<char*>(scratch));
  }
}

// Child: prints "loop size median_ns_per_pair" lines.
int child(int pairs) {
  CHECK(cudaFree(nullptr));  // the primary context, current on this thread for the driver loop too
  void* scratch = nullptr;
  CHECK(cudaMalloc(&scratch, 64));
  const int batches = pairs / kBatch > 0 ? pairs / kBatch : 1;
  for (int loop = 0; loop < kLoopCount; ++loop)
    for (size_t bytes : kSizes) {
      for (int i = 0; i < kBatch; ++i) one_pair(loop, bytes, scratch);  // warm-up
      std::vector<double> t;
      for (int b = 0; b < batches; ++b) {
        const double t0 = now_ns();
        for (int i = 0; i < kBatch; ++i) one_pair(loop, bytes, scratch);
        t.push_back((now_ns() - t0) / kBatch);
      }
      CHECK(cudaDeviceSynchronize());
      std::printf("%d %zu %.1f\n", loop, bytes, median(t));
    }
  return 0;
}

int main(int argc, char** argv) {
  int rounds = 5, pairs = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--pairs")) pairs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--child")) return child(std::atoi(argv[i + 1]));
  }
  // results[pool][loop][size] = medians over rounds
  std::map<int, std::map<int, std::map<size_t, std::vector<double>>>> results;
  for (int r = 0; r < rounds; ++r)
    for (int pool = 0; pool < 2; ++pool) {
      int fds[2];
      if (pipe(fds) != 0) return 3;
      const pid_t pid = fork();
      if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        setenv("CUDASHIM_POOL", pool ? "1" : "0", 1);
        setenv("CUDASHIM_REPORT", "0", 1);
        const std::string n = std::to_string(pairs);
        execl("/proc/self/exe", argv[0], "--child", n.c_str(), static_cast<char*>(nullptr));
        _exit(127);
      }
      close(fds[1]);
      FILE* f = fdopen(fds[0], "r");
      int loop = 0;
      size_t bytes = 0;
      double ns = 0;
      while (std::fscanf(f, "%d %zu %lf", &loop, &bytes, &ns) == 3) results[pool][loop][bytes].push_back(ns);
      std::fclose(f);
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "round %d (%s) failed\n", r, pool ? "pool" : "raw");
        return 1;
      }
    }
  const bool preloaded = std::getenv("LD_PRELOAD") && std::strstr(std::getenv("LD_PRELOAD"), "cudashim");
  std::printf("# alloc+free pair, median ns over %d rounds of %d pairs timed in batches of %d (A B A B)%s\n", rounds, pairs, kBatch,
              preloaded ? "" : "  -- WARNING: libcudashim.so is not in LD_PRELOAD, 'pool' is raw too");
  std::printf("%-16s %10s %12s %12s %9s %9s\n", "loop", "size", "raw ns", "pool ns", "pool/raw", "speed-up");
  for (int loop = 0; loop < kLoopCount; ++loop)
    for (size_t bytes : kSizes) {
      const double raw = median(results[0][loop][bytes]), pool = median(results[1][loop][bytes]);
      std::printf("%-16s %9zuK %12.1f %12.1f %9.4f %8.1fx\n", kLoops[loop], bytes >> 10, raw, pool,
                  raw > 0 ? pool / raw : 0, pool > 0 ? raw / pool : 0);
    }
  return 0;
}
