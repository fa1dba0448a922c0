// policy/rules/leaks.h: which live allocations are leaks, grouped by call site and kind.
#pragma once
#include <cstdint>
#include <vector>

#include "recorder/callsites.h"
#include "catalog/mem_kinds.h"

namespace cudashim::policy {

// Live allocations made at one call site, of one kind (cudashim's pool's cached blocks,
// freed by the program, are not leaks and are left out).
struct LeakGroup {
  const recorder::CallSite* site;  // nullptr: allocations without a known site
  MemKind kind;
  uint64_t count, bytes;
  uint64_t oldest_ticks;  // the hook clock when the oldest of them was made
};
struct Leaks {
  uint64_t live_allocations = 0, live_bytes = 0;  // over every group
  std::vector<LeakGroup> by_site;                 // every group, the largest first
};

// Reads the ledger now (cold: walks its whole table). The report's "leaks" section
// (report/sections/leaks.cpp) shows the first 20 groups.
Leaks live_leaks();

}  // namespace cudashim::policy
