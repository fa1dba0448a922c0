// nvml_hooks.cpp: see nvml_hooks.h.
#include "shim/nvml_hooks.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "policy/admission.h"
#include "catalog/mem_kinds.h"
#include "recorder/thread_slots.h"
#include "shim/thread_flags.h"
#include "shim/cuda_abi.h"
#include "shim/real_dl.h"
#include "shim/resolve.h"
#include "symbols/walk_objects.h"

namespace cudashim::shim {
namespace {

struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlMemoryV2 {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
using MemFn = int (*)(void*, void*);
using PciFn = int (*)(void*, NvmlPciInfo*);

std::atomic<void*> g_nvml_real[2];

bool is_ours(const void* p) {
  Dl_info a, b;
  return p != nullptr && dladdr(p, &a) && dladdr(reinterpret_cast<const void*>(&nvml_answer), &b) && a.dli_fbase == b.dli_fbase;
}

// The real NVML function `i`: noted by dlsym, else the next definition, else the loaded library.
void* real_nvml(int i) {
  if (void* p = g_nvml_real[i].load(std::memory_order_acquire)) return p;
  void* p = real_dl().dlsym(RTLD_NEXT, kNvmlHooks[i]);
  if (p == nullptr || is_ours(p)) {
    p = nullptr;
    void* h = nullptr;
    {
      symbols::LoaderCall gate;  // serialized with fork (symbols/walk_objects.h)
      h = real_dl().dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_NOLOAD);
    }
    if (h != nullptr) {
      p = real_dl().dlsym(h, kNvmlHooks[i]);
      if (is_ours(p)) p = nullptr;
    }
  }
  if (p != nullptr) g_nvml_real[i].store(p, std::memory_order_release);
  return p;
}

// The CUDA ordinal of an NVML device, by PCI address; -1 when it cannot be told (no CUDA
// context yet, no such device under CUDA_VISIBLE_DEVICES).
int cuda_ordinal(void* nvml_device, void* real_mem_fn) {
  Dl_info info;
  if (dladdr(real_mem_fn, &info) == 0 || info.dli_fname == nullptr) return -1;
  void* h = nullptr;
  {
    symbols::LoaderCall gate;
    h = real_dl().dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  }
  auto pci = h ? reinterpret_cast<PciFn>(real_dl().dlsym(h, "nvmlDeviceGetPciInfo_v3")) : nullptr;
  NvmlPciInfo p{};
  if (pci == nullptr || pci(nvml_device, &p) != 0) return -1;
  return cuda_ordinal_at_pci(p.domain, p.bus, p.device);
}

}  // namespace

int cuda_ordinal_at_pci(unsigned domain, unsigned bus_number, unsigned device) {
  using CountFn = CUresult (*)(int*);
  using BusFn = CUresult (*)(char*, int, CUdevice);
  auto count = reinterpret_cast<CountFn>(driver_function("cuDeviceGetCount"));
  auto bus = reinterpret_cast<BusFn>(driver_function("cuDeviceGetPCIBusId"));
  int n = 0;
  if (count == nullptr || bus == nullptr || count(&n) != CUDA_SUCCESS) return -1;
  for (int d = 0; d < n && d < kMaxDevices; ++d) {
    char id[32] = {};
    unsigned dom = 0, b = 0, dev = 0;
    if (bus(id, sizeof id, d) != CUDA_SUCCESS || std::sscanf(id, "%x:%x:%x", &dom, &b, &dev) != 3) continue;
    if (dom == domain && b == bus_number && dev == device) return d;
  }
  return -1;
}

namespace {

// total, free and used as the cap allows. Under a cap the device is a virtual one of
// `cap` bytes with no driver reservation in it: reserved (v2) becomes 0 and used = total - free.
void cap(void* nvml_device, void* real, unsigned long long& total, unsigned long long& free, unsigned long long& used,
         unsigned long long* reserved) {
  const int d = [&] {
    InternalScope internal;
    return cuda_ordinal(nvml_device, real);
  }();
  if (d < 0) return;
  size_t t = total, f = free;
  policy::cap_mem_info(d, &f, &t);
  if (t == total && f == free) return;  // no cap, or one larger than the device
  total = t, free = f, used = t - f;
  if (reserved != nullptr) *reserved = 0;
}

}  // namespace
}  // namespace cudashim::shim

using namespace cudashim::shim;

extern "C" __attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void* device, NvmlMemory* memory) {
  void* real = real_nvml(0);
  if (real == nullptr) return 9;  // NVML_ERROR_DRIVER_NOT_LOADED: no libnvidia-ml in this process
  const int r = reinterpret_cast<MemFn>(real)(device, memory);
  if (r == 0 && memory != nullptr && !g_inert.load(std::memory_order_relaxed))
    cap(device, real, memory->total, memory->free, memory->used, nullptr);
  return r;
}

extern "C" __attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo_v2(void* device, NvmlMemoryV2* memory) {
  void* real = real_nvml(1);
  if (real == nullptr) return 9;
  const int r = reinterpret_cast<MemFn>(real)(device, memory);
  if (r == 0 && memory != nullptr && !g_inert.load(std::memory_order_relaxed))
    cap(device, real, memory->total, memory->free, memory->used, &memory->reserved);
  return r;
}

namespace cudashim::shim {
void* nvml_answer(const char* name, void* real) {
  for (int i = 0; i < 2; ++i)
    if (std::strcmp(name, kNvmlHooks[i]) == 0) {
      if (real == nullptr || is_ours(real)) return real;
      void* expected = nullptr;
      g_nvml_real[i].compare_exchange_strong(expected, real, std::memory_order_acq_rel);
      return i == 0 ? reinterpret_cast<void*>(&::nvmlDeviceGetMemoryInfo) : reinterpret_cast<void*>(&::nvmlDeviceGetMemoryInfo_v2);
    }
  return nullptr;
}
}  // namespace cudashim::shim
