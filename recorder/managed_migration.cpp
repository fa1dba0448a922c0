// managed_migration.cpp: see managed_migration.h.
#include "recorder/managed_migration.h"

#include <atomic>

namespace cudashim::recorder {
namespace {

// Rows are written in place by the one writer; a reader copies the first `g_rows` (published
// with release after a row's key is set), so it may see a row's counters mid-update: one
// record's worth, no more.
struct Row {
  const void* site;
  int device;
  std::atomic<uint64_t> htod, dtoh, cpu_faults, gpu_faults;
};
Row g_table[kMaxMigrationSites];
std::atomic<int> g_rows{0};
std::atomic<uint64_t> g_dropped{0};

}  // namespace

bool managed_add_migration(const ManagedMigration& m) {
  const int n = g_rows.load(std::memory_order_relaxed);
  Row* row = nullptr;
  for (int i = 0; i < n && row == nullptr; ++i)
    if (g_table[i].site == m.site && g_table[i].device == m.device) row = &g_table[i];
  if (row == nullptr) {
    if (n >= kMaxMigrationSites) return g_dropped.fetch_add(1, std::memory_order_relaxed), false;
    row = &g_table[n];
    row->site = m.site, row->device = m.device;
    row->htod.store(0), row->dtoh.store(0), row->cpu_faults.store(0), row->gpu_faults.store(0);
    g_rows.store(n + 1, std::memory_order_release);
  }
  row->htod.fetch_add(m.htod_bytes, std::memory_order_relaxed);
  row->dtoh.fetch_add(m.dtoh_bytes, std::memory_order_relaxed);
  row->cpu_faults.fetch_add(m.cpu_page_faults, std::memory_order_relaxed);
  row->gpu_faults.fetch_add(m.gpu_page_faults, std::memory_order_relaxed);
  return true;
}

std::vector<ManagedMigration> managed_migrations() {
  const int n = g_rows.load(std::memory_order_acquire);
  std::vector<ManagedMigration> out;
  for (int i = 0; i < n; ++i) {
    const Row& r = g_table[i];
    out.push_back({r.site, r.device, r.htod.load(std::memory_order_relaxed), r.dtoh.load(std::memory_order_relaxed),
                   r.cpu_faults.load(std::memory_order_relaxed), r.gpu_faults.load(std::memory_order_relaxed)});
  }
  return out;
}

uint64_t managed_migration_dropped() { return g_dropped.load(std::memory_order_relaxed); }

void managed_migration_reset() {
  g_rows.store(0);
  g_dropped.store(0);
}

}  // namespace cudashim::recorder
