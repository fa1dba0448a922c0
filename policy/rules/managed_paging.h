// managed_paging.h: managed (unified) memory over the bus, estimated from NVML's PCIe
// throughput while managed allocations were live (recorder::GpuPcieSample), per device and
// per call site of the live allocations, and the memory.managed-paging finding
// (catalog/findings.def). How each number is measured and its error: docs/managed-memory.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/findings.h"
#include "policy/rules/gpu_time.h"
#include "recorder/gpu_samples.h"

namespace cudashim::policy {

struct ManagedPagingThresholds {
  // A reading counts as paging when TX + RX is at least this (KB/s): 64 MiB/s, far above an
  // idle bus's housekeeping and far below what paging moves (docs/managed-memory.md).
  uint64_t floor_kbps = 64 * 1024;
  // The finding: paging readings cover at least this share of the window, with at least
  // `min_paging_samples` of them, and the copy hooks' bytes explain at most half the traffic.
  uint64_t paging_warn_pct = 25;
  uint64_t min_paging_samples = 3;
};
const ManagedPagingThresholds& managed_paging_thresholds();

// The estimated traffic attributed to one call site of live managed allocations.
struct ManagedSiteTraffic {
  const void* site = nullptr;      // recorder/callsites.h, opaque; nullptr: call sites off
  uint64_t live_bytes_max = 0;     // its most live managed bytes in a reading with traffic
  uint64_t est_htod_bytes = 0, est_dtoh_bytes = 0;  // its share of the paging readings' bytes
  uint64_t paging_samples = 0;     // paging readings it was live in
  bool shared = false;             // another site's managed bytes were live in one of them
};

// One device.
struct ManagedPaging {
  int device = -1;
  uint64_t samples = 0;            // PCIe readings with managed memory live (the whole run)
  uint64_t managed_ns = 0;         // the time they stand for
  uint64_t est_htod_bytes = 0, est_dtoh_bytes = 0;  // estimated over those readings, copies included
  uint32_t peak_rx_kbps = 0, peak_tx_kbps = 0;
  // The window the share is taken over: the device's steady state (policy/rules/gpu_time.h),
  // else the run.
  uint64_t from_ns = 0, to_ns = 0;
  bool steady = false;
  uint64_t paging_samples = 0;     // readings in the window at or above the floor
  uint64_t paging_ns = 0;          // the time they stand for, clipped to the window
  double paging_share = 0;         // paging_ns / the window
  uint64_t copy_bytes = 0;         // host<->device bytes the copy hooks counted over the run
  std::vector<ManagedSiteTraffic> sites;  // the most bytes first
  bool finding = false;            // memory.managed-paging
  std::vector<std::string> evidence;      // the numbers behind it, one line each (sites by the caller)
  // The finding itself when `finding` (evaluate_managed_paging fills it): memory.managed-paging at
  // the device, its fix naming the costliest site, its evidence the numbers above.
  std::optional<Finding> found;
};

// The managed-memory traffic of each device with PCIe readings. `gpu` gives the steady windows
// (gpu_time()); `copy_bytes`: what the program copied between host and device with the copy
// hooks over the run (outermost calls). Bytes of a reading: its KB/s (KB = 1024 bytes) times the
// interval it stands for; split over the sites live in it in proportion to their live bytes.
std::vector<ManagedPaging> managed_paging(const std::vector<recorder::GpuPcieSample>& pcie,
                                          const std::vector<GpuDeviceTime>& gpu, uint64_t copy_bytes,
                                          uint64_t start_ns, uint64_t end_ns);

// The managed-memory traffic of this process's devices, decided once per report
// (report/report.cpp): the recorder's PCIe readings over [start_ns, end_ns] against the
// devices' steady windows and the copy hooks' host<->device bytes (outermost calls, by call
// site), with each finding filled in (ManagedPaging::found). Cold: walks every call site.
std::vector<ManagedPaging> evaluate_managed_paging(uint64_t start_ns, uint64_t end_ns);

}  // namespace cudashim::policy
