// managed_migration.h: the managed (unified) memory each call site's allocations moved over
// the bus, counted exactly: the place the precise mode fills (CUPTI's unified-memory counters,
// CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER: bytes host to device and device to host, CPU
// and GPU page faults; docs/managed-memory.md). Nothing in the default mode writes it: there
// the bus traffic is an estimate from NVML (GpuPcieSample, recorder/gpu_samples.h), and the
// report says which of the two each number is.
//
// The writer (CUPTI's buffer-completed callback, one thread at a time) maps a record's
// address to the live managed allocation that holds it (recorder/ledger.h) and adds it here
// under that allocation's call site. Fixed table, no allocation; what does not fit is counted.
#pragma once
#include <cstdint>
#include <vector>

namespace cudashim::recorder {

inline constexpr int kMaxMigrationSites = 256;

struct ManagedMigration {
  const void* site;  // recorder/callsites.h, opaque here; nullptr: no allocation site known
  int device;        // the CUDA ordinal of the GPU end of the transfers
  uint64_t htod_bytes, dtoh_bytes;         // CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD / _DTOH
  uint64_t cpu_page_faults, gpu_page_faults;  // ..._CPU_PAGE_FAULT_COUNT / _GPU_PAGE_FAULT
};

// Adds one counter record's values to (site, device). Returns false when the table is full
// (counted in managed_migration_dropped()). Callers never run concurrently (one writer).
bool managed_add_migration(const ManagedMigration& m);

// Copies of what was added, one row per (site, device) in first-seen order; empty when no
// precise mode ran.
std::vector<ManagedMigration> managed_migrations();
uint64_t managed_migration_dropped();

// Forgets everything (a forked child, tests).
void managed_migration_reset();

}  // namespace cudashim::recorder
