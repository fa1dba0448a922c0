// cuda_counts.cu: a known runtime-API workload for the GPU-host proof (gpu/run_gpu.sh).
//
// It counts every runtime call it makes, checks every return code, and prints ONE
// JSON line with what it did, at the runtime level:
//   {"program": "cuda_counts", "pid": P, "cudart": {...}, "runtime_calls": {ABI: N},
//    "other_runtime_calls": {...}, "launches": L, "copy_bytes": C,
//    "device0": {"live_bytes": B, "peak_bytes": B, "device_allocs": .., ...},
//    "host_pinned": {"allocs": 1, "frees": 1}}
// Which driver ABIs libcudart uses for each runtime call is cudart's business, so the
// program names no driver ABI: gpu/check_gpu_report.py compares the runtime counts
// with the report's runtime rows (shared libcudart) and with the sum over the
// driver ABIs of each operation family (always).
//
// Built three ways by gpu/prebuild.sh (static cudart, shared cudart, CUDA 12.9 runtime).
// CUDA_COUNTS_NO_VERIFY=1 skips the data checks: only for the CPU self-test
// (gpu/selftest_cpu.sh) against the test-double libcuda/libcudart, whose kernels do not run.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#error "cuda_counts names the legacy-stream ABIs (cudaMemcpy, not cudaMemcpy_ptds): build without --default-stream per-thread"
#endif

namespace {

std::map<std::string, unsigned long long> g_rt;     // hooked runtime ABIs (catalog/hooks.def runtime rows)
std::map<std::string, unsigned long long> g_other;  // runtime calls cudashim does not hook

void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cuda_counts.cu:%d: %s returned %d (%s)\n", line, what, static_cast<int>(e),
                 cudaGetErrorString(e));
    std::exit(1);
  }
}

// Counts one call of the runtime ABI `abi` and checks its result.
#define RT(abi, call) (check((call), #call, __LINE__), ++g_rt[abi])
#define OTHER(abi, call) (check((call), #call, __LINE__), ++g_other[abi])

// The runtime ABI a <<<>>> launch reaches. Since CUDA 12.8/13.0 the host stub nvcc
// writes calls __cudaGetKernel once and __cudaLaunchKernel per launch
// (crt/host_runtime.h), unless __NV_LEGACY_LAUNCH is defined, when it calls
// cudaLaunchKernel. gpu/prebuild.sh checks with nm that each binary imports the
// ABI named here.
#if defined(__NV_LEGACY_LAUNCH)
constexpr const char* kChevronAbi = "cudaLaunchKernel";
#else
constexpr const char* kChevronAbi = "__cudaLaunchKernel";
#endif

// Returns the path of the libcudart mapped into this process ("" when cudart is static).
std::string mapped_libcudart() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const auto base = path.rfind('/');
    if (path.compare(base + 1, 11, "libcudart.s") == 0) return path;
  }
  return "";
}

void print_map(const std::map<std::string, unsigned long long>& m) {
  std::printf("{");
  bool first = true;
  for (const auto& [k, v] : m) {
    std::printf("%s\"%s\": %llu", first ? "" : ", ", k.c_str(), v);
    first = false;
  }
  std::printf("}");
}

}  // namespace

__global__ void add_one(int* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 50;
  const int async_iters = argc > 2 ? std::atoi(argv[2]) : 20;
  constexpr size_t kBlock = 1u << 20;           // loop block: 1 MiB
  constexpr size_t kAsyncBlock = 2u << 20;      // stream-ordered block: 2 MiB
  constexpr size_t kPinned = 64u << 10;         // pinned host buffer: 64 KiB
  constexpr size_t kKeep = (3u << 20) + 4096;   // left allocated at exit
  constexpr int kInts = static_cast<int>(kBlock / sizeof(int));
  unsigned long long launches = 0, copy_bytes = 0;
  unsigned long long dev_allocs = 0, dev_frees = 0, async_allocs = 0, async_frees = 0;

  int count = 0;
  OTHER("cudaGetDeviceCount", cudaGetDeviceCount(&count));
  if (count < 1) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  OTHER("cudaSetDevice", cudaSetDevice(0));
  int rt_version = 0, drv_version = 0;
  OTHER("cudaRuntimeGetVersion", cudaRuntimeGetVersion(&rt_version));
  OTHER("cudaDriverGetVersion", cudaDriverGetVersion(&drv_version));

  const char* nv = std::getenv("CUDA_COUNTS_NO_VERIFY");
  const bool verify = !(nv && std::strcmp(nv, "1") == 0);
  std::vector<int> host(kInts), back(kInts);
  for (int i = 0; i < kInts; ++i) host[i] = i;
  for (int it = 0; it < iters; ++it) {
    void* d = nullptr;
    RT("cudaMalloc", cudaMalloc(&d, kBlock));
    ++dev_allocs;
    RT("cudaMemcpy", cudaMemcpy(d, host.data(), kBlock, cudaMemcpyHostToDevice));
    copy_bytes += kBlock;
    add_one<<<(kInts + 255) / 256, 256>>>(static_cast<int*>(d), kInts);
    OTHER("cudaGetLastError", cudaGetLastError());
    ++g_rt[kChevronAbi];
    ++launches;
    RT("cudaMemcpy", cudaMemcpy(back.data(), d, kBlock, cudaMemcpyDeviceToHost));
    copy_bytes += kBlock;
    RT("cudaStreamSynchronize", cudaStreamSynchronize(nullptr));
    for (int i = 0; verify && i < kInts; i += 4099)
      if (back[i] != host[i] + 1) {
        std::fprintf(stderr, "iteration %d: element %d is %d, expected %d\n", it, i, back[i], host[i] + 1);
        return 1;
      }
    RT("cudaFree", cudaFree(d));
    ++dev_frees;
  }

  // Stream-ordered allocations on a created stream, each used by one kernel launched
  // through the exported cudaLaunchKernel (the ABI torch and most libraries call).
  cudaStream_t s = nullptr;
  OTHER("cudaStreamCreate", cudaStreamCreate(&s));
  for (int it = 0; it < async_iters; ++it) {
    void* a = nullptr;
    RT("cudaMallocAsync", cudaMallocAsync(&a, kAsyncBlock, s));
    ++async_allocs;
    int* ap = static_cast<int*>(a);
    int n = kInts;
    void* args[] = {&ap, &n};
    RT("cudaLaunchKernel", cudaLaunchKernel(reinterpret_cast<const void*>(&add_one), dim3((kInts + 255) / 256),
                                            dim3(256), args, 0, s));
    ++launches;
    RT("cudaFreeAsync", cudaFreeAsync(a, s));
    ++async_frees;
  }
  RT("cudaStreamSynchronize", cudaStreamSynchronize(s));
  RT("cudaDeviceSynchronize", cudaDeviceSynchronize());

  void* pinned = nullptr;
  RT("cudaMallocHost", cudaMallocHost(&pinned, kPinned));
  std::memset(pinned, 1, kPinned);
  RT("cudaFreeHost", cudaFreeHost(pinned));
  OTHER("cudaStreamDestroy", cudaStreamDestroy(s));

  // Left allocated on purpose: the report must show exactly these bytes live at exit,
  // and as the peak (no other device block is live when it is made).
  void* keep = nullptr;
  RT("cudaMalloc", cudaMalloc(&keep, kKeep));
  ++dev_allocs;

  const std::string cudart = mapped_libcudart();
  std::printf("{\"program\": \"cuda_counts\", \"pid\": %d, \"cudart\": {\"linkage\": \"%s\", \"loaded\": ",
              static_cast<int>(getpid()), cudart.empty() ? "static" : "shared");
  if (cudart.empty())
    std::printf("null");
  else
    std::printf("\"%s\"", cudart.c_str());
  std::printf(", \"header_version\": %d, \"runtime_version\": %d, \"driver_version\": %d}, \"runtime_calls\": ",
              CUDART_VERSION, rt_version, drv_version);
  print_map(g_rt);
  std::printf(", \"other_runtime_calls\": ");
  print_map(g_other);
  std::printf(", \"launches\": %llu, \"copies\": %llu, \"copy_bytes\": %llu", launches, g_rt["cudaMemcpy"], copy_bytes);
  std::printf(", \"device0\": {\"live_bytes\": %zu, \"peak_bytes\": %zu, \"device_allocs\": %llu, \"device_frees\": %llu, "
              "\"async_allocs\": %llu, \"async_frees\": %llu}",
              kKeep, kKeep, dev_allocs, dev_frees, async_allocs, async_frees);
  std::printf(", \"host_pinned\": {\"allocs\": 1, \"frees\": 1, \"bytes\": %zu}}\n", kPinned);
  std::fflush(stdout);
  return 0;
}
