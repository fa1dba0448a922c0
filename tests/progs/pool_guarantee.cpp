// pool_guarantee: the caching pool (CUDASHIM_POOL=1) against the test-double driver,
// whose kernels take time (fakecuda_set_kernel_ns) and whose "fakecuda_writer" kernel
// keeps storing a byte over its buffer until it ends, as a real kernel writes memory.
//
//   pool_guarantee guarantee   a block freed while a kernel still writes it (legacy stream,
//                              non-blocking stream, stream destroyed with the kernel running)
//                              is not handed out again before the kernel ended; after, it is
//   pool_guarantee bound       16 x 1 MiB freed: the rest beyond POOL_MAX_CACHED go to the driver
//   pool_guarantee threads T N T threads x N alloc/launch/free: no block is ever held by two
//                              threads, or written by another thread's kernel
//   pool_guarantee trim B M    B MiB cached are released when the cap (or the driver) refuses M MiB
//   pool_guarantee oom K M     K MiB held, M MiB more refused: the report's oom_context
// Each mode prints one JSON line (what it did) for tests/preload/pool.py and exits 1
// naming every failed check. The driver is reached as libcudart does (cuGetProcAddress).
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "driver_api.h"
#include "tests/fakecuda/fakecuda_control.h"

namespace {

int g_failures = 0;
#define CHECK(cond, ...)                                         \
  do {                                                           \
    if (!(cond)) {                                               \
      std::fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                         \
      std::fprintf(stderr, "\n");                                \
      ++g_failures;                                              \
    }                                                            \
  } while (0)

constexpr size_t MiB = size_t{1} << 20;

struct Driver {
  Resolver res{Path::procaddr};
  PFN_cuInit_v2000 init;
  PFN_cuMemAlloc_v3020 alloc;
  PFN_cuMemFree_v3020 free;
  PFN_cuLaunchKernel_v4000 launch;
  PFN_cuStreamCreate_v2000 stream_create;
  PFN_cuStreamDestroy_v4000 stream_destroy;
  PFN_cuCtxSynchronize_v2000 ctx_sync;
  PFN_cuDevicePrimaryCtxRetain_v7000 retain;
  PFN_cuCtxSetCurrent_v4000 set_current;
  PFN_cuModuleLoadData_v2000 module_load;
  PFN_cuModuleGetFunction_v2000 get_function;
  fakecuda_set_kernel_ns_fn kernel_ns;
  fakecuda_pending_write_ns_fn pending;
  fakecuda_call_count_fn calls;
  CUcontext ctx = nullptr;
  CUfunction writer = nullptr, noop = nullptr;

  template <class F>
  F get(const char* base, const char* abi) {
    return reinterpret_cast<F>(res.get(base, abi));
  }
  template <class F>
  F control(const char* name) {
    auto f = reinterpret_cast<F>(dlsym(res.handle, name));
    if (f == nullptr) {
      std::fprintf(stderr, "the driver double has no %s\n", name);
      std::exit(2);
    }
    return f;
  }

  Driver() {
    init = get<PFN_cuInit_v2000>("cuInit", "cuInit");
    alloc = get<PFN_cuMemAlloc_v3020>("cuMemAlloc", "cuMemAlloc_v2");
    free = get<PFN_cuMemFree_v3020>("cuMemFree", "cuMemFree_v2");
    launch = get<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", "cuLaunchKernel");
    stream_create = get<PFN_cuStreamCreate_v2000>("cuStreamCreate", "cuStreamCreate");
    stream_destroy = get<PFN_cuStreamDestroy_v4000>("cuStreamDestroy", "cuStreamDestroy_v2");
    ctx_sync = get<PFN_cuCtxSynchronize_v2000>("cuCtxSynchronize", "cuCtxSynchronize");
    retain = get<PFN_cuDevicePrimaryCtxRetain_v7000>("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain");
    set_current = get<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent", "cuCtxSetCurrent");
    module_load = get<PFN_cuModuleLoadData_v2000>("cuModuleLoadData", "cuModuleLoadData");
    get_function = get<PFN_cuModuleGetFunction_v2000>("cuModuleGetFunction", "cuModuleGetFunction");
    kernel_ns = control<fakecuda_set_kernel_ns_fn>("fakecuda_set_kernel_ns");
    pending = control<fakecuda_pending_write_ns_fn>("fakecuda_pending_write_ns");
    calls = control<fakecuda_call_count_fn>("fakecuda_call_count");
    CHECK_CU(init(0));
    CHECK_CU(retain(&ctx, 0));
    CHECK_CU(set_current(ctx));
    static const char image[] = "fake module";
    CUmodule mod = nullptr;
    CHECK_CU(module_load(&mod, image));
    CHECK_CU(get_function(&writer, mod, "fakecuda_writer"));
    CHECK_CU(get_function(&noop, mod, "noop"));
  }

  // A kernel that stores `value` over [p, p + n) until it ends.
  void write_kernel(CUdeviceptr p, size_t n, unsigned char value, CUstream s) {
    void* params[] = {&p, &n, &value};
    CHECK_CU(launch(writer, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr));
  }
};

unsigned char* host_view(CUdeviceptr p) { return reinterpret_cast<unsigned char*>(static_cast<uintptr_t>(p)); }

// The program's own use of a fresh block: zero it, let any kernel that still held it end,
// and check that nothing else wrote it meanwhile.
void use_block_and_check(Driver& d, CUdeviceptr p, size_t n, const char* what, int64_t kernel_ns) {
  CHECK(d.pending(p) == 0, "%s: cuMemAlloc returned 0x%llx while a kernel launched before its free still writes it "
        "(%llu ns left)", what, static_cast<unsigned long long>(p), static_cast<unsigned long long>(d.pending(p)));
  std::memset(host_view(p), 0, n);
  std::this_thread::sleep_for(std::chrono::nanoseconds(kernel_ns) + std::chrono::milliseconds(50));
  size_t dirty = 0;
  for (size_t i = 0; i < n; ++i) dirty += host_view(p)[i] != 0;
  CHECK(dirty == 0, "%s: %zu bytes of the program's new block were overwritten by a kernel of the freed one", what,
        dirty);
}

int guarantee() {
  Driver d;
  constexpr int64_t kKernel = 300'000'000;  // 300 ms
  d.kernel_ns(kKernel);
  unsigned long long hits_expected = 0;
  // Without the pool (the control run) every allocation goes to the driver.
  const char* pool_env = std::getenv("CUDASHIM_POOL");
  const bool pooled = pool_env != nullptr && std::strcmp(pool_env, "1") == 0;

  // 1. legacy default stream
  CUdeviceptr a = 0, b = 0, c = 0;
  CHECK_CU(d.alloc(&a, 1 * MiB));
  d.write_kernel(a, 1 * MiB, 0xAB, nullptr);
  CHECK_CU(d.free(a));
  CHECK_CU(d.alloc(&b, 1 * MiB));
  use_block_and_check(d, b, 1 * MiB, "legacy stream", kKernel);
  // The kernel has ended: the same size now comes from the pool, without the driver.
  CHECK_CU(d.free(b));
  const uint64_t driver_allocs = d.calls("cuMemAlloc_v2");
  CHECK_CU(d.alloc(&c, 1 * MiB));
  ++hits_expected;
  CHECK(!pooled || d.calls("cuMemAlloc_v2") == driver_allocs, "after the kernel ended, cuMemAlloc still went to the driver");
  CHECK(!pooled || c == a || c == b, "a cached block was expected back (0x%llx or 0x%llx), got 0x%llx",
        static_cast<unsigned long long>(a), static_cast<unsigned long long>(b), static_cast<unsigned long long>(c));
  CHECK_CU(d.free(c));

  // 2. a non-blocking stream: work there does not wait for the legacy stream, nor does
  //    an event recorded on the legacy stream wait for it.
  CUstream nb = nullptr;
  CHECK_CU(d.stream_create(&nb, CU_STREAM_NON_BLOCKING));
  CUdeviceptr e = 0, f = 0;
  CHECK_CU(d.alloc(&e, 2 * MiB));
  d.write_kernel(e, 2 * MiB, 0xCD, nb);
  CHECK_CU(d.free(e));
  CHECK_CU(d.alloc(&f, 2 * MiB));
  use_block_and_check(d, f, 2 * MiB, "non-blocking stream", kKernel);
  CHECK_CU(d.free(f));
  CHECK_CU(d.stream_destroy(nb));

  // 3. a non-blocking stream destroyed while its kernel still runs (the driver finishes it).
  CUstream nb2 = nullptr;
  CHECK_CU(d.stream_create(&nb2, CU_STREAM_NON_BLOCKING));
  CUdeviceptr g = 0, h = 0;
  CHECK_CU(d.alloc(&g, 3 * MiB));
  d.write_kernel(g, 3 * MiB, 0xEF, nb2);
  CHECK_CU(d.stream_destroy(nb2));
  CHECK_CU(d.free(g));
  CHECK_CU(d.alloc(&h, 3 * MiB));
  use_block_and_check(d, h, 3 * MiB, "destroyed stream", kKernel);
  CHECK_CU(d.free(h));

  // 4. after all that, every size class is served from the pool again.
  CUdeviceptr x = 0, y = 0;
  const uint64_t before = d.calls("cuMemAlloc_v2");
  CHECK_CU(d.alloc(&x, 2 * MiB));
  CHECK_CU(d.alloc(&y, 3 * MiB));
  hits_expected += 2;
  CHECK(!pooled || d.calls("cuMemAlloc_v2") == before, "finished blocks were not reused");
  CHECK_CU(d.free(x));
  CHECK_CU(d.free(y));
  std::printf("{\"mode\": \"guarantee\", \"min_hits\": %llu, \"failures\": %d}\n", hits_expected, g_failures);
  return g_failures ? 1 : 0;
}

int bound() {
  Driver d;
  std::vector<CUdeviceptr> v(16);
  for (auto& p : v) CHECK_CU(d.alloc(&p, 1 * MiB));
  const uint64_t frees0 = d.calls("cuMemFree_v2");
  for (auto p : v) CHECK_CU(d.free(p));
  const uint64_t released = d.calls("cuMemFree_v2") - frees0;
  // POOL_MAX_CACHED=4MiB: four stay cached, twelve go back to the driver.
  CHECK(released == 12, "expected 12 blocks given back to the driver, saw %llu", static_cast<unsigned long long>(released));
  std::printf("{\"mode\": \"bound\", \"released\": %llu, \"failures\": %d}\n", static_cast<unsigned long long>(released),
              g_failures);
  return g_failures ? 1 : 0;
}

int threads(int nthreads, int iters) {
  Driver d;
  d.kernel_ns(20'000);  // 20 us kernels: frees often find their block's work unfinished
  std::mutex mu;
  std::set<CUdeviceptr> held;
  std::atomic<int> failures{0};
  auto work = [&](int t) {
    CHECK_CU(d.set_current(d.ctx));
    CUstream nb = nullptr;
    if (t % 2) CHECK_CU(d.stream_create(&nb, CU_STREAM_NON_BLOCKING));
    static const size_t sizes[] = {4096, 60000, 1 * MiB, 3 * MiB + 17};
    for (int i = 0; i < iters; ++i) {
      const size_t n = sizes[(i + t) % 4];
      CUdeviceptr p = 0;
      if (d.alloc(&p, n) != CUDA_SUCCESS) {
        ++failures;
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!held.insert(p).second) {
          std::fprintf(stderr, "block 0x%llx handed to two threads at once\n", static_cast<unsigned long long>(p));
          ++failures;
        }
      }
      if (d.pending(p) != 0) {
        std::fprintf(stderr, "block 0x%llx handed out while a kernel still writes it\n",
                     static_cast<unsigned long long>(p));
        ++failures;
      }
      const unsigned char mark = static_cast<unsigned char>(t + 1);
      std::memset(host_view(p), mark, n);
      d.write_kernel(p, 64, mark, nb);  // this thread's own kernel writes its own mark
      std::this_thread::yield();
      if (host_view(p)[0] != mark || host_view(p)[n - 1] != mark) {
        std::fprintf(stderr, "block 0x%llx written by another thread\n", static_cast<unsigned long long>(p));
        ++failures;
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        held.erase(p);
      }
      if (d.free(p) != CUDA_SUCCESS) ++failures;
    }
    if (nb) CHECK_CU(d.stream_destroy(nb));
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < nthreads; ++t) ts.emplace_back(work, t);
  for (auto& t : ts) t.join();
  CHECK_CU(d.ctx_sync());
  std::printf("{\"mode\": \"threads\", \"pairs\": %d, \"failures\": %d}\n", nthreads * iters, failures.load());
  return failures.load() ? 1 : 0;
}

// Run with a cap of 8 MiB (or a 16 MiB device): 6 MiB cached, then 4 MiB more must succeed.
int trim(size_t blocks, size_t big) {
  Driver d;
  std::vector<CUdeviceptr> v(blocks);
  for (auto& p : v) CHECK_CU(d.alloc(&p, 1 * MiB));
  for (auto p : v) CHECK_CU(d.free(p));
  CUdeviceptr b = 0;
  const CUresult r = d.alloc(&b, big);
  CHECK(r == CUDA_SUCCESS, "allocation of %zu bytes with %zu MiB cached returned %d", big, blocks, r);
  if (r == CUDA_SUCCESS) CHECK_CU(d.free(b));
  std::printf("{\"mode\": \"trim\", \"failures\": %d}\n", g_failures);
  return g_failures ? 1 : 0;
}

// Keeps `keep` x 1 MiB live, then asks `ask` bytes more: the cap or the driver refuses.
int oom(size_t keep, size_t ask) {
  Driver d;
  std::vector<CUdeviceptr> v(keep);
  for (auto& p : v) CHECK_CU(d.alloc(&p, 1 * MiB));
  CUdeviceptr b = 0;
  const CUresult r = d.alloc(&b, ask);
  CHECK(r == CUDA_ERROR_OUT_OF_MEMORY, "asking %zu bytes with %zu MiB held returned %d, expected out of memory", ask,
        keep, r);
  std::printf("{\"mode\": \"oom\", \"failures\": %d}\n", g_failures);
  return g_failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "guarantee") return guarantee();
  if (mode == "bound") return bound();
  if (mode == "threads" && argc == 4) return threads(std::atoi(argv[2]), std::atoi(argv[3]));
  if (mode == "trim" && argc == 4) return trim(std::strtoull(argv[2], nullptr, 0), std::strtoull(argv[3], nullptr, 0) * MiB);
  if (mode == "oom" && argc == 4) return oom(std::strtoull(argv[2], nullptr, 0), std::strtoull(argv[3], nullptr, 0) * MiB);
  std::fprintf(stderr, "usage: pool_guarantee guarantee|bound|threads T N|trim BLOCKS BIG_MIB|oom KEEP_MIB ASK_MIB\n");
  return 2;
}
