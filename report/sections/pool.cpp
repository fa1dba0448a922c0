// pool.cpp: the report's "pool" section: whether cudashim's caching pool is on, its
// bounds, and per device what it holds and did (docs/pool.md).
#include "policy/admission.h"
#include "recorder/ledger.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_pool(JsonWriter& w, const ReportContext&) {
  recorder::PoolStats st[kMaxDevices];
  const int n = recorder::pool_stats(st, kMaxDevices);
  const bool on = policy::pool_enabled();
  auto o = w.object();
  w.member("enabled", on);
  w.member("max_cached_bytes", on ? policy::pool_max_cached(0) : 0);
  w.member("max_block_bytes", on ? policy::pool_max_block(0) : 0);
  w.key("devices");
  auto a = w.array();
  for (int i = 0; i < n; ++i) {
    const recorder::PoolStats& p = st[i];
    auto row = w.object();
    w.member("device", p.device);
    w.member("cached_bytes", p.cached_bytes);
    w.member("peak_cached_bytes", p.peak_cached_bytes);
    w.member("hits", p.hits);
    w.member("misses", p.misses);
    w.member("not_ready", p.not_ready);
    w.member("bypassed", p.bypassed);
    w.member("released", p.released);
    w.member("trims", p.trims);
    w.member("fences", p.fences);
  }
}

}  // namespace cudashim::report
