// leaks.h: the allocator sections of the report: leaks, the pool, the first out-of-memory.
#pragma once
#include <string>

namespace cudashim::policy {

// The "leaks" section of the report: live allocations grouped by call site and
// kind, largest first (at most 20 groups), with count, bytes and the oldest age.
// Followed by the "pool" and "oom_context" sections below (one call from the report writer).
std::string leaks_report_json();

// The "pool" section: whether the caching pool is on, its bounds, and per device what it
// holds and did (docs/pool.md).
std::string pool_report_json();

// The "oom_context" section: the first out-of-memory's ledger per device, the largest block
// each device could still give, and the call sites holding the most memory then; null
// when there was none.
std::string oom_context_json();

}  // namespace cudashim::policy
