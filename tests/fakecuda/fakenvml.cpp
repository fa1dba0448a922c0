// fakenvml.cpp: a test-double libnvidia-ml.so.1: init, device handles, memory info (v1 and
// v2) and PCI info for the shim's capped memory views; utilization samples, clocks, clock-event
// reasons, temperature, power, PCIe throughput and critical events for the GPU sampler, scripted through the
// control API of fakecuda_control.h (fakenvml_*). Device i has the same PCI address as the fake
// driver's device i (0000:(0x10+i):00.0) and FAKECUDA_TOTAL_MEM bytes (default 80 GiB), of
// which 1 GiB is in use.
#include <pthread.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

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
// Microseconds of CLOCK_REALTIME, the time base of NVML's sample stamps.
unsigned long long realtime_us() {
  timeval tv;
  gettimeofday(&tv, nullptr);
  return static_cast<unsigned long long>(tv.tv_sec) * 1000000ull + static_cast<unsigned long long>(tv.tv_usec);
}
unsigned long long sample_period_us() {
  const char* v = std::getenv("FAKENVML_SAMPLE_US");
  const unsigned long long p = v ? std::strtoull(v, nullptr, 10) : 166667;  // 1/6 s, as on data-center GPUs
  return p < 1000 ? 1000 : p;
}

// What a device reports from a time on: fakenvml_set_utilization and fakenvml_set_clocks append
// a change; a sample takes the last change at or before its stamp.
struct State {
  unsigned long long from_us;
  unsigned gpu_pct, process_pct;
  unsigned sm_mhz, mem_mhz;
  unsigned long long reasons;
  unsigned temp_c, power_mw;
  unsigned pcie_tx_kbps, pcie_rx_kbps;  // nvmlDeviceGetPcieThroughput: TX (device to host), RX, KB/s
};
constexpr int kMaxChanges = 256;
struct Script {
  State changes[kMaxChanges];
  int n = 0;
};
Script g_script[8];
std::mutex g_mu;
unsigned long long g_load_us = 0;
struct PendingEvent {
  int device;
  unsigned long long type, data;
};
PendingEvent g_pending[64];
int g_npending = 0;
std::atomic<uint64_t> g_counts[32];
const char* const kCounted[] = {"nvmlInit_v2", "nvmlDeviceGetSamples", "nvmlDeviceGetProcessUtilization",
                                "nvmlDeviceGetClockInfo", "nvmlDeviceGetCurrentClocksEventReasons",
                                "nvmlEventSetWait_v2", "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetPowerUsage",
                                "nvmlDeviceGetPcieThroughput"};
// Calls to the counted functions from a thread not named "cudashim-flush" (the shim's
// background thread): the sampler must never read NVML on a program's thread.
std::atomic<uint64_t> g_off_thread{0};
void count(const char* name) {
  for (size_t i = 0; i < sizeof kCounted / sizeof kCounted[0]; ++i)
    if (std::strcmp(kCounted[i], name) == 0) g_counts[i].fetch_add(1);
  char thread[32] = {};
  if (pthread_getname_np(pthread_self(), thread, sizeof thread) != 0 || std::strcmp(thread, "cudashim-flush") != 0)
    g_off_thread.fetch_add(1);
}
unsigned env_u(const char* name, unsigned dflt) {
  const char* v = std::getenv(name);
  return v ? static_cast<unsigned>(std::strtoul(v, nullptr, 0)) : dflt;
}
// The state of device d at time t (g_mu held).
State state_at(int d, unsigned long long t) {
  const Script& s = g_script[d];
  State cur = s.changes[0];
  for (int i = 1; i < s.n; ++i)
    if (s.changes[i].from_us <= t) cur = s.changes[i];
  return cur;
}
void append(int d, const State& st) {
  Script& s = g_script[d];
  if (s.n < kMaxChanges) s.changes[s.n++] = st;
}
__attribute__((constructor)) void fakenvml_load() {
  g_load_us = realtime_us();
  for (auto& s : g_script) {
    // FAKENVML_UTIL_PCT: the device's utilization from load on (default 0); the process's share
    // is the same unless FAKENVML_PROCESS_PCT says otherwise. FAKENVML_CLOCK_EVENT_REASONS: the
    // reasons bits from load on (default 0). FAKENVML_PCIE_TX_KBPS, FAKENVML_PCIE_RX_KBPS: the
    // PCIe throughput from load on (default 0).
    const unsigned util = env_u("FAKENVML_UTIL_PCT", 0);
    s.changes[0] = State{0, util, env_u("FAKENVML_PROCESS_PCT", util), 1980, 3201,
                         env_u("FAKENVML_CLOCK_EVENT_REASONS", 0), 45, 300000,
                         env_u("FAKENVML_PCIE_TX_KBPS", 0), env_u("FAKENVML_PCIE_RX_KBPS", 0)};
    s.n = 1;
  }
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

FN_EXPORT int nvmlInit_v2() {
  count("nvmlInit_v2");
  return 0;
}
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

struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
union nvmlValue_t {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  signed int siVal;
};
struct nvmlSample_t {
  unsigned long long timeStamp;
  nvmlValue_t sampleValue;
};
struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil, memUtil, encUtil, decUtil;
};
struct nvmlEventData_t {
  Device* device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
};
struct EventSet {
  unsigned long long types[8];
};
EventSet g_set;

// The sample stamps after `last` up to now, one per period since load, at most `cap` of the
// newest (NVML's own buffer holds a limited history too). Returns how many; stamps in `out`.
static unsigned sample_stamps(unsigned long long last, unsigned long long* out, unsigned cap) {
  const unsigned long long p = sample_period_us(), now = realtime_us();
  unsigned long long first = g_load_us + p;
  if (last >= first) first = g_load_us + ((last - g_load_us) / p + 1) * p;
  unsigned n = 0;
  for (unsigned long long t = first; t <= now; t += p) {
    if (n == cap) std::memmove(out, out + 1, sizeof *out * (cap - 1)), --n;
    out[n++] = t;
  }
  return n;
}

FN_EXPORT int nvmlDeviceGetUtilizationRates(Device* d, nvmlUtilization_t* u) {
  count("nvmlDeviceGetUtilizationRates");
  if (d == nullptr || u == nullptr) return 2;
  std::lock_guard<std::mutex> lock(g_mu);
  const State s = state_at(d->index, realtime_us());
  u->gpu = s.gpu_pct, u->memory = s.gpu_pct / 2;
  return 0;
}
// NVML_GPU_UTILIZATION_SAMPLES (1) only; samples == NULL asks for the count.
FN_EXPORT int nvmlDeviceGetSamples(Device* d, int type, unsigned long long last, int* value_type, unsigned int* count_io,
                                   nvmlSample_t* samples) {
  count("nvmlDeviceGetSamples");
  if (d == nullptr || value_type == nullptr || count_io == nullptr) return 2;
  if (type != 1) return 3;  // NVML_ERROR_NOT_SUPPORTED
  unsigned long long stamps[120];
  std::lock_guard<std::mutex> lock(g_mu);
  const unsigned n = sample_stamps(last, stamps, 120);
  *value_type = 1;  // NVML_VALUE_TYPE_UNSIGNED_INT
  if (n == 0) return 6;  // NVML_ERROR_NOT_FOUND: nothing since `last`
  if (samples == nullptr) return *count_io = n, 0;
  if (*count_io < n) return *count_io = n, 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  for (unsigned i = 0; i < n; ++i) samples[i].timeStamp = stamps[i], samples[i].sampleValue.uiVal = state_at(d->index, stamps[i]).gpu_pct;
  *count_io = n;
  return 0;
}
// One sample per period for this process (the caller's pid, as NVML outside a container).
FN_EXPORT int nvmlDeviceGetProcessUtilization(Device* d, nvmlProcessUtilizationSample_t* out, unsigned int* count_io,
                                              unsigned long long last) {
  count("nvmlDeviceGetProcessUtilization");
  if (d == nullptr || count_io == nullptr) return 2;
  unsigned long long stamps[120];
  std::lock_guard<std::mutex> lock(g_mu);
  const unsigned n = sample_stamps(last, stamps, 120);
  if (n == 0) return 6;
  if (out == nullptr) return *count_io = n, 7;
  if (*count_io < n) return *count_io = n, 7;
  for (unsigned i = 0; i < n; ++i)
    out[i] = {static_cast<unsigned>(getpid()), stamps[i], state_at(d->index, stamps[i]).process_pct, 0, 0, 0};
  *count_io = n;
  return 0;
}
FN_EXPORT int nvmlDeviceGetClockInfo(Device* d, int type, unsigned int* mhz) {
  count("nvmlDeviceGetClockInfo");
  if (d == nullptr || mhz == nullptr) return 2;
  std::lock_guard<std::mutex> lock(g_mu);
  const State s = state_at(d->index, realtime_us());
  *mhz = type == 2 ? s.mem_mhz : s.sm_mhz;  // NVML_CLOCK_MEM, else SM/graphics
  return 0;
}
FN_EXPORT int nvmlDeviceGetCurrentClocksEventReasons(Device* d, unsigned long long* reasons) {
  count("nvmlDeviceGetCurrentClocksEventReasons");
  if (d == nullptr || reasons == nullptr) return 2;
  std::lock_guard<std::mutex> lock(g_mu);
  *reasons = state_at(d->index, realtime_us()).reasons;
  return 0;
}
FN_EXPORT int nvmlDeviceGetTemperature(Device* d, int, unsigned int* c) {
  if (d == nullptr || c == nullptr) return 2;
  std::lock_guard<std::mutex> lock(g_mu);
  *c = state_at(d->index, realtime_us()).temp_c;
  return 0;
}
FN_EXPORT int nvmlDeviceGetPowerUsage(Device* d, unsigned int* mw) {
  count("nvmlDeviceGetPowerUsage");
  if (d == nullptr || mw == nullptr) return 2;
  std::lock_guard<std::mutex> lock(g_mu);
  *mw = state_at(d->index, realtime_us()).power_mw;
  return 0;
}
// NVML_PCIE_UTIL_TX_BYTES (0) or NVML_PCIE_UTIL_RX_BYTES (1), KB/s. The real call measures over
// about 20 ms; the double answers at once with the scripted value.
FN_EXPORT int nvmlDeviceGetPcieThroughput(Device* d, int counter, unsigned int* kbps) {
  count("nvmlDeviceGetPcieThroughput");
  if (d == nullptr || kbps == nullptr || counter < 0 || counter > 1) return 2;
  std::lock_guard<std::mutex> lock(g_mu);
  const State s = state_at(d->index, realtime_us());
  *kbps = counter == 0 ? s.pcie_tx_kbps : s.pcie_rx_kbps;
  return 0;
}
FN_EXPORT int nvmlDeviceGetEnforcedPowerLimit(Device* d, unsigned int* mw) {
  if (d == nullptr || mw == nullptr) return 2;
  *mw = 700000;
  return 0;
}
FN_EXPORT int nvmlEventSetCreate(EventSet** set) {
  if (set == nullptr) return 2;
  *set = &g_set;
  return 0;
}
FN_EXPORT int nvmlDeviceRegisterEvents(Device* d, unsigned long long types, EventSet* set) {
  if (d == nullptr || set == nullptr) return 2;
  set->types[d->index] |= types;
  return 0;
}
FN_EXPORT int nvmlEventSetFree(EventSet*) { return 0; }
// Hands out the oldest pending event of a registered type; NVML_ERROR_TIMEOUT when none (the
// double never waits: the sampler polls with a timeout of 0).
FN_EXPORT int nvmlEventSetWait_v2(EventSet* set, nvmlEventData_t* data, unsigned int) {
  count("nvmlEventSetWait_v2");
  if (set == nullptr || data == nullptr) return 2;
  std::lock_guard<std::mutex> lock(g_mu);
  for (int i = 0; i < g_npending; ++i) {
    const PendingEvent e = g_pending[i];
    if ((set->types[e.device] & e.type) == 0) continue;
    std::memmove(g_pending + i, g_pending + i + 1, sizeof *g_pending * (g_npending - i - 1));
    --g_npending;
    *data = {&g_devices[e.device], e.type, e.data, 0xFFFFFFFFu, 0xFFFFFFFFu};
    return 0;
  }
  return 10;  // NVML_ERROR_TIMEOUT
}

// ---- the control API (fakecuda_control.h)
FN_EXPORT void fakenvml_set_utilization(unsigned device, unsigned gpu_pct, unsigned process_pct) {
  if (device >= 8) return;
  std::lock_guard<std::mutex> lock(g_mu);
  State s = state_at(static_cast<int>(device), ~0ull);
  s.from_us = realtime_us(), s.gpu_pct = gpu_pct, s.process_pct = process_pct;
  append(static_cast<int>(device), s);
}
FN_EXPORT void fakenvml_set_clocks(unsigned device, unsigned sm_mhz, unsigned mem_mhz, unsigned long long reasons) {
  if (device >= 8) return;
  std::lock_guard<std::mutex> lock(g_mu);
  State s = state_at(static_cast<int>(device), ~0ull);
  s.from_us = realtime_us(), s.sm_mhz = sm_mhz, s.mem_mhz = mem_mhz, s.reasons = reasons;
  append(static_cast<int>(device), s);
}
FN_EXPORT void fakenvml_set_pcie(unsigned device, unsigned tx_kbps, unsigned rx_kbps) {
  if (device >= 8) return;
  std::lock_guard<std::mutex> lock(g_mu);
  State s = state_at(static_cast<int>(device), ~0ull);
  s.from_us = realtime_us(), s.pcie_tx_kbps = tx_kbps, s.pcie_rx_kbps = rx_kbps;
  append(static_cast<int>(device), s);
}
FN_EXPORT void fakenvml_raise_event(unsigned device, unsigned long long type, unsigned long long data) {
  if (device >= 8) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_npending < 64) g_pending[g_npending++] = {static_cast<int>(device), type, data};
}
FN_EXPORT uint64_t fakenvml_call_count(const char* name) {
  if (std::strcmp(name, "off_flush_thread") == 0) return g_off_thread.load();
  for (size_t i = 0; i < sizeof kCounted / sizeof kCounted[0]; ++i)
    if (std::strcmp(kCounted[i], name) == 0) return g_counts[i].load();
  return 0;
}
