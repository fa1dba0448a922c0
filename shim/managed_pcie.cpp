// managed_pcie.cpp: see managed_pcie.h.
#include "shim/managed_pcie.h"

#include <algorithm>

#include "recorder/clock.h"
#include "recorder/gpu_samples.h"
#include "recorder/ledger.h"

namespace cudashim::shim {
namespace {

// The previous tick of each device (monotonic ns; 0: none yet).
uint64_t g_last_tick[recorder::kMaxGpus];

// A reading stands for at most this long: the sampler ticks about once a second, and a gap
// longer than this (the flush thread held up) is not assumed to have looked like the reading.
constexpr uint64_t kMaxIntervalNs = 2'000'000'000ull, kFirstIntervalNs = 1'000'000'000ull;

uint64_t managed_live(int ordinal) {
  static recorder::DeviceStats rows[kMaxDevices + 1];  // 20 KiB: off the flush thread's stack
  const int n = recorder::ledger_devices(rows, kMaxDevices + 1);
  for (int i = 0; i < n; ++i)
    if (rows[i].device == ordinal) return rows[i].kinds[static_cast<int>(MemKind::managed)].live_bytes;
  return 0;
}

// The live managed bytes on one device by call site (a fixed list: the flush thread's own).
struct SiteBytes {
  int device;
  recorder::GpuPcieSample::Site sites[64];
  int n;
  uint64_t unlisted;
};

void add_live(const recorder::LiveAllocation& a, void* ctx) {
  auto& s = *static_cast<SiteBytes*>(ctx);
  if (a.kind != MemKind::managed || a.device != s.device) return;
  for (int i = 0; i < s.n; ++i)
    if (s.sites[i].site == a.site) return void(s.sites[i].bytes += a.bytes);
  if (s.n < 64) s.sites[s.n++] = {a.site, a.bytes}; else s.unlisted += a.bytes;
}

void fill_sites(recorder::GpuPcieSample& p) {
  static SiteBytes s;  // 1 KiB: off the flush thread's stack
  s.device = p.device, s.n = 0, s.unlisted = 0;
  recorder::ledger_for_each_live(add_live, &s);  // the whole table: a few ms, once a tick with traffic
  std::sort(s.sites, s.sites + s.n, [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  p.nsites = static_cast<uint32_t>(std::min(s.n, recorder::kPcieSampleSites));
  std::copy(s.sites, s.sites + p.nsites, p.sites);
  p.other_sites_bytes = s.unlisted;
  for (int i = static_cast<int>(p.nsites); i < s.n; ++i) p.other_sites_bytes += s.sites[i].bytes;
}

}  // namespace

void managed_pcie_tick(const symbols::NvmlApi& api, symbols::NvmlDevice device, int ordinal) {
  if (ordinal < 0 || ordinal >= recorder::kMaxGpus) return;
  const uint64_t now = monotonic_ns();
  const uint64_t last = g_last_tick[ordinal];
  g_last_tick[ordinal] = now;
  if (api.pcie_throughput == nullptr) return;
  const uint64_t live = managed_live(ordinal);
  if (live == 0) return;
  recorder::GpuPcieSample p{};
  if (api.pcie_throughput(device, symbols::kNvmlPcieUtilTxBytes, &p.tx_kbps) != symbols::kNvmlSuccess ||
      api.pcie_throughput(device, symbols::kNvmlPcieUtilRxBytes, &p.rx_kbps) != symbols::kNvmlSuccess)
    return;
  p.t_ns = monotonic_ns();
  p.interval_ns = last == 0 ? kFirstIntervalNs : std::min(now - last, kMaxIntervalNs);
  p.device = ordinal;
  p.managed_live_bytes = live;
  if (p.tx_kbps != 0 || p.rx_kbps != 0) fill_sites(p);
  recorder::gpu_record_pcie(p);
}

void managed_pcie_reset() {
  for (auto& t : g_last_tick) t = 0;
}

}  // namespace cudashim::shim
