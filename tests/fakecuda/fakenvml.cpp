// fakenvml.cpp: a test-double libnvidia-ml.so.1, just enough NVML for the shim's capped
// memory views: init, device handles, memory info (v1 and v2) and PCI info. Device i has the
// same PCI address as the fake driver's device i (0000:(0x10+i):00.0) and FAKECUDA_TOTAL_MEM
// bytes (default 80 GiB), of which 1 GiB is in use.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define FN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
struct Device {
  int index;
};
Device g_devices[8] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
unsigned long long total_mem() {
  const char* v = std::getenv("FAKECUDA_TOTAL_MEM");
  return v ? std::strtoull(v, nullptr, 10) : 80ull << 30;
}
int device_count() {
  const char* v = std::getenv("FAKECUDA_DEVICE_COUNT");
  const int n = v ? std::atoi(v) : 1;
  return n < 1 ? 1 : n > 8 ? 8 : n;
}
}  // namespace

struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlMemory_v2_t {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

FN_EXPORT int nvmlInit_v2() { return 0; }
FN_EXPORT int nvmlShutdown() { return 0; }
FN_EXPORT int nvmlDeviceGetCount_v2(unsigned int* n) {
  if (n == nullptr) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *n = static_cast<unsigned>(device_count());
  return 0;
}
FN_EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, Device** out) {
  if (out == nullptr || i >= static_cast<unsigned>(device_count())) return 2;
  *out = &g_devices[i];
  return 0;
}
FN_EXPORT int nvmlDeviceGetMemoryInfo(Device* d, nvmlMemory_t* m) {
  if (d == nullptr || m == nullptr) return 2;
  m->total = total_mem(), m->used = 1ull << 30, m->free = m->total - m->used;
  return 0;
}
FN_EXPORT int nvmlDeviceGetMemoryInfo_v2(Device* d, nvmlMemory_v2_t* m) {
  if (d == nullptr || m == nullptr) return 2;
  m->total = total_mem(), m->reserved = 512ull << 20, m->used = 1ull << 30, m->free = m->total - m->used - m->reserved;
  return 0;
}
FN_EXPORT int nvmlDeviceGetPciInfo_v3(Device* d, nvmlPciInfo_t* p) {
  if (d == nullptr || p == nullptr) return 2;
  std::memset(p, 0, sizeof *p);
  p->domain = 0, p->bus = 0x10 + d->index, p->device = 0;
  std::snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus);
  std::snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", p->bus);
  return 0;
}
