// cap_paths: run with CUDASHIM_MEM_CAP=10MiB. Every allocation path that takes
// device memory is capped, and answers CUDA_ERROR_OUT_OF_MEMORY when over the cap;
// host allocations are not; the memory views report the capped device.
#include <map>
#include <string>

#include "driver_api.h"

static int g_failures = 0;
#define EXPECT_EQ(a, b)                                                                              \
  do {                                                                                               \
    const long long a_ = static_cast<long long>(a), b_ = static_cast<long long>(b);                  \
    if (a_ != b_) {                                                                                  \
      std::fprintf(stderr, "%s:%d: %s = %lld, expected %s = %lld\n", __FILE__, __LINE__, #a, a_, #b, b_); \
      ++g_failures;                                                                                  \
    }                                                                                                \
  } while (0)

int main() {
  constexpr size_t MiB = 1 << 20;
  std::map<std::string, unsigned long long> n;
  Resolver res(Path::procaddr);
  auto init = reinterpret_cast<PFN_cuInit_v2000>(res.get("cuInit", "cuInit"));
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(res.get("cuMemAlloc", "cuMemAlloc_v2"));
  auto pitch = reinterpret_cast<PFN_cuMemAllocPitch_v3020>(res.get("cuMemAllocPitch", "cuMemAllocPitch_v2"));
  auto mfree = reinterpret_cast<PFN_cuMemFree_v3020>(res.get("cuMemFree", "cuMemFree_v2"));
  auto async = reinterpret_cast<PFN_cuMemAllocAsync_v11020>(res.get("cuMemAllocAsync", "cuMemAllocAsync"));
  auto managed = reinterpret_cast<PFN_cuMemAllocManaged_v6000>(res.get("cuMemAllocManaged", "cuMemAllocManaged"));
  auto create = reinterpret_cast<PFN_cuMemCreate_v10020>(res.get("cuMemCreate", "cuMemCreate"));
  auto release = reinterpret_cast<PFN_cuMemRelease_v10020>(res.get("cuMemRelease", "cuMemRelease"));
  auto host = reinterpret_cast<PFN_cuMemAllocHost_v3020>(res.get("cuMemAllocHost", "cuMemAllocHost_v2"));
  auto info = reinterpret_cast<PFN_cuMemGetInfo_v3020>(res.get("cuMemGetInfo", "cuMemGetInfo_v2"));
  auto total = reinterpret_cast<PFN_cuDeviceTotalMem_v3020>(res.get("cuDeviceTotalMem", "cuDeviceTotalMem_v2"));
  CHECK_CU(init(0)); n["cuInit"]++;

  CUdeviceptr a = 0, b = 0, c = 0, p = 0;
  size_t pitch_bytes = 0;
  EXPECT_EQ(alloc(&a, 4 * MiB), CUDA_SUCCESS); n["cuMemAlloc_v2"]++;
  EXPECT_EQ(alloc(&b, 4 * MiB), CUDA_SUCCESS); n["cuMemAlloc_v2"]++;
  EXPECT_EQ(alloc(&c, 4 * MiB), CUDA_ERROR_OUT_OF_MEMORY); n["cuMemAlloc_v2"]++;             // 12 > 10
  EXPECT_EQ(async(&c, 4 * MiB, nullptr), CUDA_ERROR_OUT_OF_MEMORY); n["cuMemAllocAsync"]++;  // async too
  EXPECT_EQ(managed(&c, 4 * MiB, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_OUT_OF_MEMORY); n["cuMemAllocManaged"]++;
  EXPECT_EQ(pitch(&p, &pitch_bytes, 2048, 2048, 4), CUDA_ERROR_OUT_OF_MEMORY); n["cuMemAllocPitch_v2"]++;
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUmemGenericAllocationHandle h = 0;
  EXPECT_EQ(create(&h, 4 * MiB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY); n["cuMemCreate"]++;     // VMM, device
  prop.location.type = CU_MEM_LOCATION_TYPE_HOST;                                             // NCCL's host memory
  EXPECT_EQ(create(&h, 64 * MiB, &prop, 0), CUDA_SUCCESS); n["cuMemCreate"]++;
  EXPECT_EQ(release(h), CUDA_SUCCESS); n["cuMemRelease"]++;
  void* pinned = nullptr;
  EXPECT_EQ(host(&pinned, 64 * MiB), CUDA_SUCCESS); n["cuMemAllocHost_v2"]++;                // host: not capped

  size_t free = 0, tot = 0;
  EXPECT_EQ(info(&free, &tot), CUDA_SUCCESS); n["cuMemGetInfo_v2"]++;
  EXPECT_EQ(tot, 10 * MiB);
  EXPECT_EQ(free, 2 * MiB);
  EXPECT_EQ(info(nullptr, nullptr), CUDA_SUCCESS); n["cuMemGetInfo_v2"]++;                    // NULL tolerated
  size_t dev_total = 0;
  EXPECT_EQ(total(&dev_total, 0), CUDA_SUCCESS); n["cuDeviceTotalMem_v2"]++;
  EXPECT_EQ(dev_total, 10 * MiB);

  EXPECT_EQ(mfree(a), CUDA_SUCCESS); n["cuMemFree_v2"]++;                                     // room again
  EXPECT_EQ(async(&c, 4 * MiB, nullptr), CUDA_SUCCESS); n["cuMemAllocAsync"]++;
  EXPECT_EQ(info(&free, &tot), CUDA_SUCCESS); n["cuMemGetInfo_v2"]++;
  EXPECT_EQ(free, 2 * MiB);
  if (g_failures) return 1;
  print_expectations(n, "\"expect_device0\": {\"live_bytes\": 8388608, \"peak_bytes\": 8388608}");
  return 0;
}
