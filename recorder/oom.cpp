// oom.cpp: out-of-memory bookkeeping.
#include "recorder/oom.h"

#include <algorithm>
#include <new>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "recorder/clock.h"
#include "recorder/ledger.h"

namespace cudashim::recorder {
namespace {
std::atomic<uint64_t> g_count{0}, g_denied{0};
// The last event is copied under a spinlock: OOMs are rare and never on a hot path.
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;
OomEvent g_last{};
OomQueries g_queries{nullptr, nullptr};
std::mutex g_first_mu;
OomSnapshot g_first;

struct SiteTotal {
  uint64_t bytes = 0, count = 0;
};
void add_live(const LiveAllocation& a, void* ctx) {
  if (a.cached || !(is_device_resident(a.kind) || a.kind == MemKind::managed)) return;
  auto& m = *static_cast<std::unordered_map<const void*, SiteTotal>*>(ctx);
  SiteTotal& t = m[a.site];
  t.bytes += a.bytes;
  ++t.count;
}

void take_snapshot(const OomEvent& e) {
  OomSnapshot s;
  s.taken = true;
  s.event = e;
  s.at_ns = monotonic_ns();
  DeviceStats devs[kMaxDevices + 1];
  const int n = ledger_devices(devs, kMaxDevices + 1);
  for (int i = 0; i < n && s.devices < 8; ++i) {
    if (devs[i].device == kHostDevice) continue;
    OomDevice& d = s.device[s.devices++];
    d.device = devs[i].device;
    d.live_bytes = devs[i].live_bytes;
    d.peak_bytes = devs[i].peak_bytes;
    d.capped_bytes = ledger_capped_bytes(d.device);
    d.cached_bytes = ledger_cached_bytes(d.device);
    d.cap = g_queries.cap_of ? g_queries.cap_of(d.device) : 0;
    if (d.cap != 0) {
      d.largest_block = d.capped_bytes >= d.cap ? 0 : d.cap - d.capped_bytes;
      d.basis = "cap";
    } else if (d.device == e.device && g_queries.driver_free != nullptr) {
      d.largest_block = g_queries.driver_free(d.device);
      d.basis = d.largest_block ? "driver_free" : "unknown";
    } else {
      d.basis = "unknown";
    }
  }
  std::unordered_map<const void*, SiteTotal> by_site;
  ledger_for_each_live(add_live, &by_site);
  std::vector<std::pair<const void*, SiteTotal>> v(by_site.begin(), by_site.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
  for (const auto& [site, t] : v) {
    if (s.sites == 8) break;
    s.site[s.sites++] = {site, t.bytes, t.count};
  }
  std::lock_guard<std::mutex> lock(g_first_mu);
  if (!g_first.taken) g_first = s;
}
}  // namespace

void oom_configure(OomQueries q) { g_queries = q; }

OomSnapshot oom_first() {
  std::lock_guard<std::mutex> lock(g_first_mu);
  return g_first;
}

void record_oom(const OomEvent& e) {
  if (g_count.fetch_add(1, std::memory_order_relaxed) == 0) {
    try {
      take_snapshot(e);
    } catch (...) {  // out of host memory too: the count and the last event remain
    }
  }
  if (e.denied_by_policy) g_denied.fetch_add(1, std::memory_order_relaxed);
  while (g_lock.test_and_set(std::memory_order_acquire)) {
  }
  g_last = e;
  g_lock.clear(std::memory_order_release);
}

OomSummary oom_summary() {
  OomSummary s{g_count.load(std::memory_order_relaxed), g_denied.load(std::memory_order_relaxed), {}};
  while (g_lock.test_and_set(std::memory_order_acquire)) {
  }
  s.last = g_last;
  g_lock.clear(std::memory_order_release);
  return s;
}

void oom_reset() {
  g_count = 0;
  g_denied = 0;
  g_last = OomEvent{};
  g_lock.clear();
  // Called single-threaded (tests, a forked child that may have inherited the lock held).
  new (&g_first_mu) std::mutex;
  g_first = OomSnapshot{};
}

}  // namespace cudashim::recorder
