// managed_memory.cpp: the report's "managed_memory" section: managed (unified) memory over
// the bus. The default mode's estimate per device from NVML's PCIe throughput while managed
// allocations were live, split over the allocations' call sites, and the memory.managed-paging
// finding at those sites, as policy/rules/managed_paging.h decided them once for the report
// (ReportContext::managed); and the precise mode's exact counts per site when it filled them
// (recorder/managed_migration.h). docs/managed-memory.md, docs/report-schema.md.
#include <fmt/format.h>

#include "policy/rules/managed_paging.h"
#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/managed_migration.h"
#include "report/sections/sections.h"

namespace cudashim::report {
namespace {

const recorder::CallSite* as_site(const void* p) { return static_cast<const recorder::CallSite*>(p); }

std::string where(const void* site) { return site ? policy::describe_site(*as_site(site)) : std::string("unknown site"); }

void write_where(JsonWriter& w, const void* site) {
  w.key("where");
  if (site) w.value(policy::describe_site(*as_site(site))); else w.null();
  w.key("api");
  if (site) w.value(hook_info(as_site(site)->api).name); else w.null();
}

void write_device(JsonWriter& w, const policy::ManagedPaging& m, uint64_t start) {
  auto o = w.object();
  w.member("device", m.device);
  w.member("estimate", true);
  w.member("samples", m.samples);
  w.member("managed_ns", m.managed_ns);
  w.member("est_htod_bytes", m.est_htod_bytes);
  w.member("est_dtoh_bytes", m.est_dtoh_bytes);
  w.member("peak_rx_kbps", m.peak_rx_kbps);
  w.member("peak_tx_kbps", m.peak_tx_kbps);
  w.member("copies_included", true);
  w.member("copy_bytes", m.copy_bytes);
  w.key("window");
  {
    auto wo = w.object();
    w.member("kind", m.steady ? "steady" : "run");
    w.member("from_ns", m.from_ns > start ? m.from_ns - start : 0);
    w.member("to_ns", m.to_ns > start ? m.to_ns - start : 0);
  }
  w.member("paging_samples", m.paging_samples);
  w.member("paging_share", JsonFixed{m.paging_share, 3});
  w.key("sites");
  {
    auto a = w.array();
    for (const auto& s : m.sites) {
      auto so = w.object();
      write_where(w, s.site);
      w.member("live_bytes_max", s.live_bytes_max);
      w.member("est_htod_bytes", s.est_htod_bytes);
      w.member("est_dtoh_bytes", s.est_dtoh_bytes);
      w.member("paging_samples", s.paging_samples);
      w.member("shared", s.shared);
    }
  }
  w.key("evidence");
  {
    auto a = w.array();
    for (const auto& e : m.evidence) w.value(e);
    for (const auto& s : m.sites)
      w.value(fmt::format("{}: an estimated {:.1f} MiB host to device, {:.1f} MiB device to host{}", where(s.site),
                          static_cast<double>(s.est_htod_bytes) / 1048576.0, static_cast<double>(s.est_dtoh_bytes) / 1048576.0,
                          s.shared ? " (shared: readings split by live managed bytes)" : ""));
  }
}

// The finding as policy::evaluate_managed_paging decided it, and the sites it names.
void write_finding(JsonWriter& w, const policy::ManagedPaging& m, const Finding& f) {
  auto o = w.object();
  w.member("id", f.name());
  w.member("severity", severity_name(f.severity()));
  w.member("device", m.device);
  w.member("estimate", true);
  w.member("title", f.info().title);
  w.member("fix", f.fix());
  w.key("sites");
  auto a = w.array();
  for (size_t i = 0; i < m.sites.size() && i < 5; ++i) {
    auto so = w.object();
    write_where(w, m.sites[i].site);
    w.member("est_bytes", m.sites[i].est_htod_bytes + m.sites[i].est_dtoh_bytes);
    w.member("shared", m.sites[i].shared);
  }
}

void write_precise(JsonWriter& w) {
  const auto rows = recorder::managed_migrations();
  auto o = w.object();
  w.member("mode", rows.empty() ? "off" : "cupti");
  w.member("dropped", recorder::managed_migration_dropped());
  w.key("sites");
  auto a = w.array();
  for (const auto& r : rows) {
    auto so = w.object();
    write_where(w, r.site);
    w.member("device", r.device);
    w.member("htod_bytes", r.htod_bytes);
    w.member("dtoh_bytes", r.dtoh_bytes);
    w.member("cpu_page_faults", r.cpu_page_faults);
    w.member("gpu_page_faults", r.gpu_page_faults);
  }
}

}  // namespace

void write_managed_memory(JsonWriter& w, const ReportContext& c) {
  const uint64_t start = c.process.start_mono_ns;
  auto o = w.object();
  w.member("floor_kbps", policy::managed_paging_thresholds().floor_kbps);
  w.key("devices");
  {
    auto a = w.array();
    for (const auto& m : c.managed) write_device(w, m, start);
  }
  w.key("findings");
  {
    auto a = w.array();
    for (const auto& m : c.managed)
      if (m.found) write_finding(w, m, *m.found);
  }
  w.key("precise");
  write_precise(w);
}

}  // namespace cudashim::report
