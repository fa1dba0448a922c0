// stress_threads: T threads x C hooked calls each, through cuGetProcAddress_v2
// (as cudart resolves them): launches, queries, async copies, alloc/free pairs.
// Counts must be exact: the shim's per-thread slots take no lock and lose nothing.
#include <thread>
#include <vector>

#include "driver_api.h"
#include "fake_truth.h"

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 32;
  const long calls = argc > 2 ? std::atol(argv[2]) : 1000000;
  Resolver res(Path::procaddr);
  auto init = reinterpret_cast<PFN_cuInit_v2000>(res.get("cuInit", "cuInit"));
  auto launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(res.get("cuLaunchKernel", "cuLaunchKernel"));
  auto query = reinterpret_cast<PFN_cuStreamQuery_v2000>(res.get("cuStreamQuery", "cuStreamQuery"));
  auto htod = reinterpret_cast<PFN_cuMemcpyHtoDAsync_v3020>(res.get("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2"));
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(res.get("cuMemAlloc", "cuMemAlloc_v2"));
  auto mfree = reinterpret_cast<PFN_cuMemFree_v3020>(res.get("cuMemFree", "cuMemFree_v2"));
  CHECK_CU(init(0));
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      char buf[64];
      CUdeviceptr d = 0;
      CHECK_CU(alloc(&d, sizeof buf));
      for (long i = 0; i < calls / 4; ++i) {
        launch(reinterpret_cast<CUfunction>(0x1), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
        query(nullptr);
        htod(d, buf, sizeof buf, nullptr);
        if (i & 1) {
          CUdeviceptr p = 0;
          alloc(&p, 256);
          mfree(p);
        } else {
          query(nullptr);
        }
      }
      CHECK_CU(mfree(d));
    });
  for (auto& t : ts) t.join();
  std::map<std::string, unsigned long long> n;
  add_driver_truth(n);
  print_expectations(n, "\"expect_device0\": {\"live_bytes\": 0}");
  return 0;
}
