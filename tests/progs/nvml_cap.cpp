// nvml_cap: NVML's memory views under the shim. Initializes the driver (a context on device
// 0), then asks NVML (dlopen + dlsym, as pynvml and torch do) for device 0's memory with
// nvmlDeviceGetMemoryInfo and _v2, and prints one JSON line:
//   {"v1": [total, free, used], "v2": [total, reserved, free, used]}
#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>

struct Mem {
  unsigned long long total, free, used;
};
struct MemV2 {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};

int main() {
  void* cu = dlopen("libcuda.so.1", RTLD_NOW);
  void* ml = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (cu == nullptr || ml == nullptr) return std::fprintf(stderr, "nvml_cap: %s\n", dlerror()), 2;
  auto init = reinterpret_cast<CUresult (*)(unsigned)>(dlsym(cu, "cuInit"));
  auto get = reinterpret_cast<CUresult (*)(CUdevice*, int)>(dlsym(cu, "cuDeviceGet"));
  auto retain = reinterpret_cast<CUresult (*)(CUcontext*, CUdevice)>(dlsym(cu, "cuDevicePrimaryCtxRetain"));
  auto set = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(cu, "cuCtxSetCurrent"));
  auto alloc = reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t)>(dlsym(cu, "cuMemAlloc_v2"));
  CUdevice d = 0;
  CUcontext c = nullptr;
  CUdeviceptr p = 0;
  if (init(0) || get(&d, 0) || retain(&c, d) || set(c) || alloc(&p, 256u << 20)) return std::fprintf(stderr, "nvml_cap: driver\n"), 2;
  auto nvml_init = reinterpret_cast<int (*)()>(dlsym(ml, "nvmlInit_v2"));
  auto handle = reinterpret_cast<int (*)(unsigned, void**)>(dlsym(ml, "nvmlDeviceGetHandleByIndex_v2"));
  auto mem = reinterpret_cast<int (*)(void*, Mem*)>(dlsym(ml, "nvmlDeviceGetMemoryInfo"));
  auto mem2 = reinterpret_cast<int (*)(void*, MemV2*)>(dlsym(ml, "nvmlDeviceGetMemoryInfo_v2"));
  void* dev = nullptr;
  Mem m{};
  MemV2 m2{};
  m2.version = (2u << 24) | sizeof(MemV2);
  if (nvml_init() || handle(0, &dev) || mem(dev, &m) || mem2(dev, &m2)) return std::fprintf(stderr, "nvml_cap: nvml\n"), 2;
  std::printf("{\"v1\": [%llu, %llu, %llu], \"v2\": [%llu, %llu, %llu, %llu]}\n", m.total, m.free, m.used, m2.total,
              m2.reserved, m2.free, m2.used);
  return 0;
}
