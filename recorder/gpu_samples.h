// gpu_samples.h: what the GPU sampler (shim/gpu_sampler.cpp) read from NVML, kept for the
// report, the trace and the crash record (docs/gpu-time.md).
//
// One writer, the flush thread; readers copy what was published (a count stored with
// release after the element). Fixed arrays, no allocation: an hour of health samples at one
// a second per device, and 12 hours of utilization samples of every 1/6 s device, overwrite
// nothing: what does not fit is counted as dropped. Times are CLOCK_MONOTONIC nanoseconds
// (recorder/clock.h monotonic_ns), NVML's own CLOCK_REALTIME stamps converted at reading.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cudashim::recorder {

inline constexpr int kMaxGpus = 16;

// One device's health, read about once a second. A field NVML did not answer is 0 and its
// bit in `have` is clear. No member initializers: the recorder's arrays of these stay in .bss
// (value-initialize one with {}).
struct GpuHealthSample {
  uint64_t t_ns;
  int device;  // the CUDA ordinal
  enum : uint32_t { kClocks = 1, kReasons = 2, kTemp = 4, kPower = 8, kMemory = 16, kUtil = 32 };
  uint32_t have;
  uint32_t sm_mhz, mem_mhz;
  uint64_t clock_event_reasons;  // nvmlClocksEventReason* bits (symbols/nvml_api.h)
  uint32_t temp_c;
  uint32_t power_mw, power_limit_mw;
  uint64_t mem_used_bytes, mem_total_bytes;
  uint32_t util_gpu_pct, util_mem_pct;  // nvmlDeviceGetUtilizationRates: the last period
};

// One utilization sample: the share of one NVML sample period in which a kernel ran on the
// device (device-wide), or in which this process's kernels ran (per process).
struct GpuUtilSample {
  uint64_t t_ns;
  int16_t device;
  uint8_t pct;
  bool process;  // nvmlDeviceGetProcessUtilization (this pid's smUtil), else nvmlDeviceGetSamples
};

// A critical NVML event: an Xid error or a double-bit ECC error.
struct GpuEventRecord {
  uint64_t t_ns;
  int device;
  uint64_t type;  // nvmlEventType* bits
  uint64_t data;  // the Xid number
};

// One PCIe throughput reading of a device while managed memory was live on it
// (nvmlDeviceGetPcieThroughput: KB/s, measured by NVML over about 20 ms at the call), with the
// managed allocations live then by call site (docs/managed-memory.md). A reading stands for the
// whole interval since the device's previous tick: an estimate, not a count.
inline constexpr int kPcieSampleSites = 4;
struct GpuPcieSample {
  uint64_t t_ns;
  uint64_t interval_ns;         // the time this reading stands for
  int device;                   // the CUDA ordinal
  uint32_t tx_kbps, rx_kbps;    // TX: sent by the GPU (device to host); RX: received (host to device)
  uint64_t managed_live_bytes;  // live managed bytes on the device (recorder/ledger.h)
  struct Site {
    const void* site;  // recorder/callsites.h, opaque here; nullptr when call sites are off
    uint64_t bytes;    // its live managed bytes
  } sites[kPcieSampleSites];    // the largest first; filled only when there was traffic
  uint32_t nsites;
  uint64_t other_sites_bytes;   // live managed bytes of the sites beyond kPcieSampleSites
};

// What the sampler found at start (report "gpu_time.sampling").
struct GpuSamplerState {
  enum Mode : int { kNotStarted = 0, kOff, kNoNvml, kSampling } mode = kNotStarted;
  const char* reason = "";  // why not sampling (static text)
  int devices = 0;
  bool device_samples = false, process_samples = false, events = false;
};

// Writers (the flush thread only).
void gpu_set_state(const GpuSamplerState& s);
void gpu_record_health(const GpuHealthSample& s);
void gpu_record_util(const GpuUtilSample& s);
void gpu_record_event(const GpuEventRecord& e);
void gpu_record_pcie(const GpuPcieSample& s);

// Readers: copies of what was published.
GpuSamplerState gpu_state();
std::vector<GpuHealthSample> gpu_health_samples();
std::vector<GpuUtilSample> gpu_util_samples();
std::vector<GpuEventRecord> gpu_events();
std::vector<GpuPcieSample> gpu_pcie_samples();
uint64_t gpu_dropped_samples();

// Writes `, "gpu": {"last_health": [...], "events": [...]}` into buf[n..cap) for the crash
// record, advancing n: async-signal-safe (no allocation, no lock). Nothing when nothing was sampled.
void gpu_flight_json(char* buf, size_t& n, size_t cap);

// Forgets everything (a forked child, tests).
void gpu_samples_reset();

}  // namespace cudashim::recorder
