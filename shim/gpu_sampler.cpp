// gpu_sampler.cpp: see gpu_sampler.h.
#include "shim/gpu_sampler.h"

#include <unistd.h>

#include <ctime>

#include "policy/rules/gpu_time.h"
#include "recorder/clock.h"
#include "recorder/event_stream.h"
#include "recorder/gpu_samples.h"
#include "shim/managed_pcie.h"
#include "shim/nvml_hooks.h"
#include "shim/real_dl.h"
#include "shim/thread_flags.h"
#include "symbols/nvml_api.h"
#include "symbols/walk_objects.h"

namespace cudashim::shim {
namespace {

using recorder::GpuHealthSample;
using recorder::GpuSamplerState;
using recorder::GpuUtilSample;
using symbols::NvmlDevice;

bool g_enabled = true;
pid_t g_pid = 0;  // the process the state below belongs to (a forked child starts over)
bool g_ready = false;
symbols::NvmlApi g_api;
symbols::NvmlEventSet g_events = nullptr;
struct Device {
  NvmlDevice handle;
  int ordinal;  // the CUDA ordinal, -1 until the driver names it
  unsigned long long last_device_us, last_process_us;
};
Device g_devices[recorder::kMaxGpus];
int g_ndevices = 0;
int g_mapped = 0;
int g_map_tries = 0;
GpuSamplerState g_state;

void* lookup(void* handle, const char* name) { return real_dl().dlsym(handle, name); }

// CLOCK_REALTIME minus CLOCK_MONOTONIC, in ns: converts NVML's stamps (realtime us) to the
// recorder's clock.
int64_t realtime_offset_ns() {
  timespec r;
  clock_gettime(CLOCK_REALTIME, &r);
  const uint64_t mono = monotonic_ns();
  return static_cast<int64_t>(static_cast<uint64_t>(r.tv_sec) * 1000000000ull + static_cast<uint64_t>(r.tv_nsec)) -
         static_cast<int64_t>(mono);
}

void publish(GpuSamplerState::Mode mode, const char* reason) {
  g_state.mode = mode;
  g_state.reason = reason;
  recorder::gpu_set_state(g_state);
}

// Loads NVML and enumerates its devices; false (with the state saying why) when it cannot.
bool start() {
  g_state = {};
  g_ready = false;
  g_ndevices = g_mapped = g_map_tries = 0;
  g_events = nullptr;
  if (!g_enabled) return publish(GpuSamplerState::kOff, "CUDASHIM_GPU_SAMPLING=0"), false;
  void* h = nullptr;
  {
    // Serialized with fork: a child forked while this maps NVML would abort at its own first
    // dlopen (symbols/walk_objects.h).
    symbols::LoaderCall gate;
    h = real_dl().dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  }
  if (h == nullptr) return publish(GpuSamplerState::kNoNvml, "libnvidia-ml.so.1 could not be loaded"), false;
  if (symbols::nvml_bind(g_api, lookup, h) != nullptr)
    return publish(GpuSamplerState::kNoNvml, "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlDeviceGetCount_v2, "
                                             "nvmlDeviceGetHandleByIndex_v2 or nvmlDeviceGetPciInfo_v3"), false;
  unsigned n = 0;
  if (g_api.init() != symbols::kNvmlSuccess || g_api.device_count(&n) != symbols::kNvmlSuccess)
    return publish(GpuSamplerState::kNoNvml, "nvmlInit_v2 or nvmlDeviceGetCount_v2 failed"), false;
  if (g_api.event_set_create != nullptr && g_api.register_events != nullptr && g_api.event_wait != nullptr &&
      g_api.event_set_create(&g_events) != symbols::kNvmlSuccess)
    g_events = nullptr;
  for (unsigned i = 0; i < n && g_ndevices < recorder::kMaxGpus; ++i) {
    NvmlDevice d = nullptr;
    if (g_api.device_by_index(i, &d) == symbols::kNvmlSuccess) g_devices[g_ndevices++] = {d, -1, 0, 0};
  }
  g_state.device_samples = g_api.samples != nullptr;
  g_state.process_samples = g_api.process_utilization != nullptr;
  g_ready = true;
  publish(GpuSamplerState::kSampling, "");
  return true;
}

// Names the CUDA ordinal of each NVML device the driver knows by now; devices this process
// cannot see (CUDA_VISIBLE_DEVICES) stay unmapped and are never sampled.
void map_devices() {
  InternalScope internal;  // the driver calls below are ours, not the program's
  for (int i = 0; i < g_ndevices; ++i) {
    Device& d = g_devices[i];
    if (d.ordinal >= 0) continue;
    symbols::NvmlPciInfo p{};
    if (g_api.pci_info(d.handle, &p) != symbols::kNvmlSuccess) continue;
    d.ordinal = cuda_ordinal_at_pci(p.domain, p.bus, p.device);
    if (d.ordinal < 0) continue;
    ++g_mapped;
    if (g_events != nullptr &&
        g_api.register_events(d.handle, symbols::kNvmlEventXidCritical | symbols::kNvmlEventDoubleBitEcc, g_events) ==
            symbols::kNvmlSuccess)
      g_state.events = true;
  }
  g_state.devices = g_mapped;
  publish(GpuSamplerState::kSampling, "");
}

uint64_t value_of(const symbols::NvmlSample& s, int type) {
  switch (type) {
    case symbols::kNvmlValueUnsignedLong: return s.sampleValue.ulVal;
    case symbols::kNvmlValueUnsignedLongLong: return s.sampleValue.ullVal;
    default: return s.sampleValue.uiVal;
  }
}

// NVML's sample buffers, read once per tick (static: the flush thread is the only reader).
constexpr unsigned kMaxRead = 256;
symbols::NvmlSample g_samples[kMaxRead];
symbols::NvmlProcessUtilizationSample g_proc[kMaxRead];

void read_utilization(Device& d, int64_t offset, uint64_t since_ns) {
  auto to_mono = [&](unsigned long long us) {
    const int64_t t = static_cast<int64_t>(us) * 1000 - offset;
    return t > 0 ? static_cast<uint64_t>(t) : 0;
  };
  if (g_api.samples != nullptr) {
    int type = 0;
    unsigned n = 0;
    if (g_api.samples(d.handle, symbols::kNvmlGpuUtilizationSamples, d.last_device_us, &type, &n, nullptr) ==
            symbols::kNvmlSuccess &&
        n > 0) {
      n = n > kMaxRead ? kMaxRead : n;
      if (g_api.samples(d.handle, symbols::kNvmlGpuUtilizationSamples, d.last_device_us, &type, &n, g_samples) ==
          symbols::kNvmlSuccess)
        for (unsigned i = 0; i < n; ++i) {
          if (g_samples[i].timeStamp <= d.last_device_us) continue;
          d.last_device_us = g_samples[i].timeStamp;
          const uint64_t t = to_mono(g_samples[i].timeStamp);
          const uint64_t v = value_of(g_samples[i], type);
          if (t >= since_ns)
            recorder::gpu_record_util(GpuUtilSample{t, static_cast<int16_t>(d.ordinal), static_cast<uint8_t>(v > 100 ? 100 : v), false});
        }
    }
  }
  if (g_api.process_utilization != nullptr) {
    unsigned n = kMaxRead;
    if (g_api.process_utilization(d.handle, g_proc, &n, d.last_process_us) == symbols::kNvmlSuccess) {
      const unsigned pid = static_cast<unsigned>(getpid());  // the host's pid in a container: see docs/gpu-time.md
      for (unsigned i = 0; i < n && i < kMaxRead; ++i) {
        if (g_proc[i].timeStamp > d.last_process_us) d.last_process_us = g_proc[i].timeStamp;
        const uint64_t t = to_mono(g_proc[i].timeStamp);
        if (g_proc[i].pid != pid || t < since_ns) continue;
        const unsigned v = g_proc[i].smUtil;
        recorder::gpu_record_util(GpuUtilSample{t, static_cast<int16_t>(d.ordinal), static_cast<uint8_t>(v > 100 ? 100 : v), true});
      }
    }
  }
}

void read_health(const Device& d) {
  GpuHealthSample s{};
  s.t_ns = monotonic_ns();
  s.device = d.ordinal;
  if (g_api.clock && g_api.clock(d.handle, symbols::kNvmlClockSm, &s.sm_mhz) == 0 &&
      g_api.clock(d.handle, symbols::kNvmlClockMem, &s.mem_mhz) == 0)
    s.have |= GpuHealthSample::kClocks;
  unsigned long long reasons = 0;
  if (g_api.clock_events && g_api.clock_events(d.handle, &reasons) == 0)
    s.clock_event_reasons = reasons, s.have |= GpuHealthSample::kReasons;
  if (g_api.temperature && g_api.temperature(d.handle, symbols::kNvmlTemperatureGpu, &s.temp_c) == 0)
    s.have |= GpuHealthSample::kTemp;
  if (g_api.power && g_api.power(d.handle, &s.power_mw) == 0) {
    s.have |= GpuHealthSample::kPower;
    if (g_api.power_limit) g_api.power_limit(d.handle, &s.power_limit_mw);
  }
  symbols::NvmlMemory m{};
  if (g_api.memory && g_api.memory(d.handle, &m) == 0)  // NVML's own: the shim's cap does not apply here
    s.mem_used_bytes = m.used, s.mem_total_bytes = m.total, s.have |= GpuHealthSample::kMemory;
  symbols::NvmlUtilization u{};
  if (g_api.utilization && g_api.utilization(d.handle, &u) == 0)
    s.util_gpu_pct = u.gpu, s.util_mem_pct = u.memory, s.have |= GpuHealthSample::kUtil;
  recorder::gpu_record_health(s);
  recorder::stream_event(recorder::GpuHealthEvent{s});
}

void read_events() {
  if (g_events == nullptr || !g_state.events) return;
  for (int k = 0; k < 16; ++k) {  // a storm of events cannot hold the flush thread
    symbols::NvmlEventData e{};
    if (g_api.event_wait(g_events, &e, 0) != symbols::kNvmlSuccess) return;
    int ordinal = -1;
    for (int i = 0; i < g_ndevices; ++i)
      if (g_devices[i].handle == e.device) ordinal = g_devices[i].ordinal;
    const recorder::GpuEventRecord r{monotonic_ns(), ordinal, e.eventType, e.eventData};
    recorder::gpu_record_event(r);
    recorder::stream_event(recorder::GpuErrorEvent{r});
  }
}

}  // namespace

void gpu_sampler_configure(const policy::Settings& s) {
  g_enabled = s.gpu_sampling;
  policy::configure_gpu_time(s);
}

void gpu_sampler_tick() {
  static uint64_t since_ns = 0;
  if (g_pid != getpid()) {
    g_pid = getpid();
    recorder::gpu_samples_reset();
    managed_pcie_reset();
    since_ns = monotonic_ns();
    start();
  }
  if (!g_ready) return;
  // The driver names its devices once the program has initialized it; a process that never
  // does is given up on after a minute of tries.
  if (g_mapped < g_ndevices && g_map_tries < 60) ++g_map_tries, map_devices();
  const int64_t offset = realtime_offset_ns();
  for (int i = 0; i < g_ndevices; ++i) {
    Device& d = g_devices[i];
    if (d.ordinal < 0) continue;
    read_utilization(d, offset, since_ns);
    read_health(d);
    managed_pcie_tick(g_api, d.handle, d.ordinal);  // only while managed memory is live there
  }
  read_events();
}

}  // namespace cudashim::shim
