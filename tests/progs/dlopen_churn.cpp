// dlopen_churn: one thread dlopens and dlcloses CUDA-family libraries (the runtime
// test double, NVIDIA's libcudart) in a loop while 4 threads call hooked driver
// functions; the shim's counts of those calls must stay exact and nothing may crash.
#include <atomic>
#include <thread>
#include <vector>

#include "driver_api.h"
#include "fake_truth.h"

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 500;
  Resolver res(Path::procaddr);
  auto query = reinterpret_cast<PFN_cuStreamQuery_v2000>(res.get("cuStreamQuery", "cuStreamQuery"));
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(res.get("cuMemAlloc", "cuMemAlloc_v2"));
  auto mfree = reinterpret_cast<PFN_cuMemFree_v3020>(res.get("cuMemFree", "cuMemFree_v2"));
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        query(nullptr);
        CUdeviceptr p = 0;
        if (alloc(&p, 256) == CUDA_SUCCESS) mfree(p);
      }
    });
  for (int i = 0; i < rounds; ++i)
    for (int k = 2; k < argc; ++k) {
      void* h = dlopen(argv[k], RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) {
        std::fprintf(stderr, "dlopen %s: %s\n", argv[k], dlerror());
        return 2;
      }
      // Look a hooked name up through the fresh handle, as a framework would.
      (void)dlsym(h, "cudaMalloc");
      dlclose(h);
    }
  stop = true;
  for (auto& t : ts) t.join();
  std::map<std::string, unsigned long long> n;
  add_driver_truth(n);
  print_expectations(n, "\"expect_device0\": {\"live_bytes\": 0}");
  return 0;
}
