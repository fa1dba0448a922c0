// managed_paging.cpp: see managed_paging.h.
#include "policy/rules/managed_paging.h"

#include <fmt/format.h>

#include <algorithm>

#include "catalog/hooks.h"
#include "policy/sync_rules.h"
#include "recorder/callsites.h"

namespace cudashim::policy {
namespace {

const ManagedPagingThresholds g_thresholds;

uint64_t bytes_of(uint32_t kbps, uint64_t ns) {
  return static_cast<uint64_t>(static_cast<double>(kbps) * 1024.0 * static_cast<double>(ns) / 1e9);
}

std::string mib(uint64_t b) { return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1024.0 * 1024.0)); }

ManagedSiteTraffic& site_row(std::vector<ManagedSiteTraffic>& rows, const void* site) {
  for (auto& r : rows)
    if (r.site == site) return r;
  rows.push_back({});
  rows.back().site = site;
  return rows.back();
}

// Splits one paging reading's bytes over the sites live in it, by their live bytes.
void attribute(ManagedPaging& m, const recorder::GpuPcieSample& p, uint64_t htod, uint64_t dtoh) {
  uint64_t total = p.other_sites_bytes;
  for (uint32_t i = 0; i < p.nsites; ++i) total += p.sites[i].bytes;
  if (total == 0) return;
  const bool shared = p.nsites + (p.other_sites_bytes ? 1 : 0) > 1;
  for (uint32_t i = 0; i < p.nsites; ++i) {
    ManagedSiteTraffic& r = site_row(m.sites, p.sites[i].site);
    const double part = static_cast<double>(p.sites[i].bytes) / static_cast<double>(total);
    r.est_htod_bytes += static_cast<uint64_t>(part * static_cast<double>(htod));
    r.est_dtoh_bytes += static_cast<uint64_t>(part * static_cast<double>(dtoh));
    r.live_bytes_max = std::max(r.live_bytes_max, p.sites[i].bytes);
    ++r.paging_samples;
    r.shared = r.shared || shared;
  }
}

}  // namespace

const ManagedPagingThresholds& managed_paging_thresholds() { return g_thresholds; }

std::vector<ManagedPaging> managed_paging(const std::vector<recorder::GpuPcieSample>& pcie,
                                          const std::vector<GpuDeviceTime>& gpu, uint64_t copy_bytes,
                                          uint64_t start_ns, uint64_t end_ns) {
  const ManagedPagingThresholds& t = g_thresholds;
  std::vector<int> devices;
  for (const auto& p : pcie)
    if (std::find(devices.begin(), devices.end(), p.device) == devices.end()) devices.push_back(p.device);
  std::sort(devices.begin(), devices.end());
  std::vector<ManagedPaging> out;
  for (int dev : devices) {
    ManagedPaging m;
    m.device = dev;
    m.copy_bytes = copy_bytes;
    m.from_ns = start_ns, m.to_ns = end_ns;
    for (const auto& g : gpu)
      if (g.device == dev && g.steady.samples) m.from_ns = g.steady.from_ns, m.to_ns = g.steady.to_ns, m.steady = true;
    for (const auto& p : pcie) {
      if (p.device != dev || p.t_ns < start_ns || p.t_ns > end_ns) continue;
      const uint64_t htod = bytes_of(p.rx_kbps, p.interval_ns), dtoh = bytes_of(p.tx_kbps, p.interval_ns);
      ++m.samples;
      m.managed_ns += p.interval_ns;
      m.est_htod_bytes += htod, m.est_dtoh_bytes += dtoh;
      m.peak_rx_kbps = std::max(m.peak_rx_kbps, p.rx_kbps), m.peak_tx_kbps = std::max(m.peak_tx_kbps, p.tx_kbps);
      if (static_cast<uint64_t>(p.rx_kbps) + p.tx_kbps < t.floor_kbps) continue;
      attribute(m, p, htod, dtoh);
      if (p.t_ns < m.from_ns || p.t_ns > m.to_ns) continue;
      ++m.paging_samples;
      m.paging_ns += std::min(p.interval_ns, p.t_ns - m.from_ns);
    }
    const uint64_t window = m.to_ns > m.from_ns ? m.to_ns - m.from_ns : 0;
    m.paging_share = window ? std::min(1.0, static_cast<double>(m.paging_ns) / static_cast<double>(window)) : 0;
    std::sort(m.sites.begin(), m.sites.end(), [](const auto& a, const auto& b) {
      return a.est_htod_bytes + a.est_dtoh_bytes > b.est_htod_bytes + b.est_dtoh_bytes;
    });
    const uint64_t traffic = m.est_htod_bytes + m.est_dtoh_bytes;
    m.evidence.push_back(fmt::format(
        "device {}: while managed memory was live ({} readings over {:.1f} s), PCIe carried an estimated {} host to "
        "device and {} device to host (NVML's ~20 ms throughput readings scaled to each tick; copies included)",
        dev, m.samples, static_cast<double>(m.managed_ns) / 1e9, mib(m.est_htod_bytes), mib(m.est_dtoh_bytes)));
    m.evidence.push_back(fmt::format("paging (TX+RX at least {} MiB/s) in {} readings, {:.0f}% of the {}", t.floor_kbps / 1024,
                                     m.paging_samples, 100.0 * m.paging_share, m.steady ? "steady state" : "run"));
    if (copy_bytes)
      m.evidence.push_back(fmt::format("the program's own copies (cudaMemcpy and the like) moved {} between host and device over the run",
                                       mib(copy_bytes)));
    const bool enough = m.paging_samples >= t.min_paging_samples && 100.0 * m.paging_share >= static_cast<double>(t.paging_warn_pct);
    const bool copies_explain = 2 * copy_bytes >= traffic;
    if (enough && copies_explain)
      m.evidence.push_back("the copies could account for half the traffic or more: no finding");
    m.finding = enough && !copies_explain;
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

// Host<->device bytes of the program's copies over the run: the outermost copy calls' bytes at
// their call sites (a runtime copy and the driver copy under it count once), device-to-device
// copies and memsets left out; a copy of unknown direction is counted (it may cross the bus).
uint64_t host_device_copy_bytes() {
  uint64_t b = 0;
  recorder::for_each_site([&](const recorder::CallSite& s) {
    const HookInfo& h = hook_info(s.api);
    if (h.family == Family::copy && h.dir != CopyDir::D2D && h.dir != CopyDir::MEMSET)
      b += s.bytes.load(std::memory_order_relaxed);
  });
  return b;
}

// memory.managed-paging at `m`'s device: the row's severity, the fix at its costliest site.
Finding paging_finding(const ManagedPaging& m) {
  Finding f{FindingId::managed_paging, fmt::format("device {}", m.device), "", m.evidence};
  const void* top = m.sites.empty() ? nullptr : m.sites.front().site;
  if (top) f.exact_fix = fmt::format("{}: {}", describe_site(*static_cast<const recorder::CallSite*>(top)), f.info().fix);
  return f;
}

}  // namespace

std::vector<ManagedPaging> evaluate_managed_paging(uint64_t start_ns, uint64_t end_ns) {
  // The steady windows only: the host's side does not change them.
  const auto gpu = gpu_time(recorder::gpu_util_samples(), recorder::gpu_health_samples(), HostActivity{}, start_ns, end_ns);
  auto devices = managed_paging(recorder::gpu_pcie_samples(), gpu, host_device_copy_bytes(), start_ns, end_ns);
  for (ManagedPaging& m : devices)
    if (m.finding) m.found = paging_finding(m);
  return devices;
}

}  // namespace cudashim::policy
