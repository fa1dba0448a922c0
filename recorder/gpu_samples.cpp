// gpu_samples.cpp: see gpu_samples.h.
#include "recorder/gpu_samples.h"

#include <atomic>

namespace cudashim::recorder {
namespace {

// A fixed array with one writer: the element is written, then the count is published.
template <typename T, size_t N>
struct Published {
  T items[N];
  std::atomic<size_t> n{0};
  bool push(const T& v) {
    const size_t k = n.load(std::memory_order_relaxed);
    if (k >= N) return false;
    items[k] = v;
    n.store(k + 1, std::memory_order_release);
    return true;
  }
  std::vector<T> copy() const {
    const size_t k = n.load(std::memory_order_acquire);
    return std::vector<T>(items, items + k);
  }
};

Published<GpuHealthSample, 3600 * 4> g_health;
Published<GpuUtilSample, 6 * 3600 * 12> g_util;
Published<GpuEventRecord, 256> g_events;
Published<GpuPcieSample, 3600 * 4> g_pcie;  // an hour at one a second for four devices
std::atomic<uint64_t> g_dropped{0};
std::atomic<int> g_mode{0};
GpuSamplerState g_state;  // written before g_mode is published

// The newest health sample of each device, for the crash record: an index into g_health.
std::atomic<int64_t> g_last[kMaxGpus];

// Async-signal-safe appenders into a caller's buffer.
void put(char* buf, size_t& n, size_t cap, const char* s) {
  for (; *s && n + 1 < cap; ++s) buf[n++] = *s;
}
void put_u(char* buf, size_t& n, size_t cap, uint64_t v) {
  char tmp[24];
  int i = 0;
  do tmp[i++] = static_cast<char>('0' + v % 10); while ((v /= 10) && i < 24);
  while (i > 0 && n + 1 < cap) buf[n++] = tmp[--i];
}

}  // namespace

void gpu_set_state(const GpuSamplerState& s) {
  g_state = s;
  g_mode.store(s.mode, std::memory_order_release);
}

void gpu_record_health(const GpuHealthSample& s) {
  const size_t k = g_health.n.load(std::memory_order_relaxed);
  if (!g_health.push(s)) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (s.device >= 0 && s.device < kMaxGpus) g_last[s.device].store(static_cast<int64_t>(k) + 1, std::memory_order_release);
}

void gpu_record_util(const GpuUtilSample& s) {
  if (!g_util.push(s)) g_dropped.fetch_add(1, std::memory_order_relaxed);
}

void gpu_record_event(const GpuEventRecord& e) {
  if (!g_events.push(e)) g_dropped.fetch_add(1, std::memory_order_relaxed);
}

void gpu_record_pcie(const GpuPcieSample& s) {
  if (!g_pcie.push(s)) g_dropped.fetch_add(1, std::memory_order_relaxed);
}

GpuSamplerState gpu_state() {
  if (g_mode.load(std::memory_order_acquire) == GpuSamplerState::kNotStarted) return {};
  return g_state;
}
std::vector<GpuHealthSample> gpu_health_samples() { return g_health.copy(); }
std::vector<GpuUtilSample> gpu_util_samples() { return g_util.copy(); }
std::vector<GpuEventRecord> gpu_events() { return g_events.copy(); }
std::vector<GpuPcieSample> gpu_pcie_samples() { return g_pcie.copy(); }
uint64_t gpu_dropped_samples() { return g_dropped.load(std::memory_order_relaxed); }

void gpu_flight_json(char* buf, size_t& n, size_t cap) {
  const size_t ne = g_events.n.load(std::memory_order_acquire);
  bool any = ne > 0;
  for (int d = 0; d < kMaxGpus && !any; ++d) any = g_last[d].load(std::memory_order_acquire) != 0;
  if (!any) return;
  put(buf, n, cap, ",\n \"gpu\": {\"last_health\": [");
  bool first = true;
  for (int d = 0; d < kMaxGpus; ++d) {
    const int64_t k = g_last[d].load(std::memory_order_acquire);
    if (k == 0) continue;
    const GpuHealthSample& s = g_health.items[k - 1];
    put(buf, n, cap, first ? "{\"device\": " : ", {\"device\": ");
    first = false;
    put_u(buf, n, cap, static_cast<uint64_t>(d));
    put(buf, n, cap, ", \"t_ns\": ");
    put_u(buf, n, cap, s.t_ns);
    put(buf, n, cap, ", \"sm_mhz\": ");
    put_u(buf, n, cap, s.sm_mhz);
    put(buf, n, cap, ", \"mem_mhz\": ");
    put_u(buf, n, cap, s.mem_mhz);
    put(buf, n, cap, ", \"clock_event_reasons\": ");
    put_u(buf, n, cap, s.clock_event_reasons);
    put(buf, n, cap, ", \"temp_c\": ");
    put_u(buf, n, cap, s.temp_c);
    put(buf, n, cap, ", \"power_mw\": ");
    put_u(buf, n, cap, s.power_mw);
    put(buf, n, cap, ", \"power_limit_mw\": ");
    put_u(buf, n, cap, s.power_limit_mw);
    put(buf, n, cap, ", \"mem_used_bytes\": ");
    put_u(buf, n, cap, s.mem_used_bytes);
    put(buf, n, cap, ", \"util_gpu_pct\": ");
    put_u(buf, n, cap, s.util_gpu_pct);
    put(buf, n, cap, "}");
  }
  put(buf, n, cap, "], \"events\": [");
  for (size_t i = 0; i < ne; ++i) {
    const GpuEventRecord& e = g_events.items[i];
    put(buf, n, cap, i == 0 ? "{\"type\": \"" : ", {\"type\": \"");
    put(buf, n, cap, (e.type & 0x8) ? "xid" : "double_bit_ecc");  // nvmlEventTypeXidCriticalError = 0x8
    put(buf, n, cap, "\", \"device\": ");
    put_u(buf, n, cap, static_cast<uint64_t>(e.device < 0 ? 0 : e.device));
    put(buf, n, cap, ", \"data\": ");
    put_u(buf, n, cap, e.data);
    put(buf, n, cap, ", \"t_ns\": ");
    put_u(buf, n, cap, e.t_ns);
    put(buf, n, cap, "}");
  }
  put(buf, n, cap, "]}");
}

void gpu_samples_reset() {
  g_health.n.store(0);
  g_util.n.store(0);
  g_events.n.store(0);
  g_pcie.n.store(0);
  g_dropped.store(0);
  for (auto& l : g_last) l.store(0);
  g_mode.store(0);
}

}  // namespace cudashim::recorder
