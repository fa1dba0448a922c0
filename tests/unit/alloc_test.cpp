// alloc_test.cpp: the ledger's pool marks and the first out-of-memory's snapshot, driven
// directly (no preloading). Run by cudashim_unit_alloc.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "recorder/ledger.h"
#include "recorder/oom.h"
#include "recorder/recorder.h"

using namespace cudashim;
using namespace cudashim::recorder;

namespace {
constexpr uint64_t MiB = 1 << 20;
uint64_t cap_8mib(int) { return 8 * MiB; }
uint64_t no_cap(int) { return 0; }
uint64_t free_3mib(int) { return 3 * MiB; }

struct Live {
  int count = 0, cached = 0;
};
void count_live(const LiveAllocation& a, void* ctx) {
  auto* l = static_cast<Live*>(ctx);
  ++l->count;
  l->cached += a.cached;
}
}  // namespace

TEST_CASE("a cached block stays held and charged, reported apart", "[ledger][pool]") {
  ledger_reset();
  REQUIRE(ledger_insert(MemKind::device, 0x10000, 2 * MiB, 0));
  REQUIRE(ledger_insert(MemKind::device, 0x90000, 1 * MiB, 0));
  CHECK(ledger_set_cached(0x10000, true) == 2 * MiB);
  CHECK(ledger_set_cached(0x10000, true) == 0);  // already cached: nothing changes (a double free)
  CHECK(ledger_set_cached(0x12345, true) == 0);  // unknown
  CHECK(ledger_cached_bytes(0) == 2 * MiB);
  CHECK(ledger_capped_bytes(0) == 3 * MiB);  // the process still holds it
  Live l;
  ledger_for_each_live(count_live, &l);
  CHECK(l.count == 2);
  CHECK(l.cached == 1);
  SECTION("reused: no longer cached") {
    CHECK(ledger_set_cached(0x10000, false) == 2 * MiB);
    CHECK(ledger_cached_bytes(0) == 0);
    CHECK(ledger_capped_bytes(0) == 3 * MiB);
  }
  SECTION("given back to the driver while cached: neither held nor cached") {
    CHECK(ledger_erase(MemKind::device, 0x10000) == 2 * MiB);
    CHECK(ledger_cached_bytes(0) == 0);
    CHECK(ledger_capped_bytes(0) == 1 * MiB);
  }
  SECTION("peak and counters") {
    pool_count(PoolCounter::hits, 0, 3);
    pool_count(PoolCounter::trims, 0);
    PoolStats s[4];
    REQUIRE(pool_stats(s, 4) == 1);
    CHECK(s[0].device == 0);
    CHECK(s[0].peak_cached_bytes == 2 * MiB);
    CHECK(s[0].hits == 3);
    CHECK(s[0].trims == 1);
  }
  ledger_reset();
}

TEST_CASE("the first out-of-memory keeps its context", "[oom]") {
  ledger_reset();
  oom_reset();
  const int site_a = 0, site_b = 0;  // stand-ins for call sites: only their addresses matter here
  ledger_insert(MemKind::device, 0x1000, 4 * MiB, 0);
  ledger_attach_site(MemKind::device, 0x1000, &site_a);
  ledger_insert(MemKind::device, 0x2000, 1 * MiB, 0);
  ledger_attach_site(MemKind::device, 0x2000, &site_b);
  ledger_insert(MemKind::device, 0x3000, 1 * MiB, 0);
  ledger_attach_site(MemKind::device, 0x3000, &site_b);
  ledger_insert(MemKind::device, 0x4000, 1 * MiB, 0);  // cached: the pool's, not a site's
  ledger_set_cached(0x4000, true);
  ledger_insert(MemKind::host_pinned, 0x5000, 9 * MiB, kHostDevice);  // host memory is not in the device's context

  SECTION("under a cap: the largest block is cap minus what the device holds") {
    oom_configure({cap_8mib, free_3mib});
    record_oom({HookId::cuMemAlloc_v2, 0, 2 * MiB, ledger_capped_bytes(0), 8 * MiB, true, "cap"});
    record_oom({HookId::cuMemAllocAsync, 0, 5 * MiB, ledger_capped_bytes(0), 8 * MiB, true, "cap"});
    const OomSnapshot s = oom_first();
    REQUIRE(s.taken);
    CHECK(s.event.api == HookId::cuMemAlloc_v2);  // the first one, not the last
    CHECK(s.event.requested == 2 * MiB);
    REQUIRE(s.devices == 1);
    CHECK(s.device[0].capped_bytes == 7 * MiB);
    CHECK(s.device[0].cached_bytes == 1 * MiB);
    CHECK(s.device[0].largest_block == 1 * MiB);
    CHECK(std::string(s.device[0].basis) == "cap");
    REQUIRE(s.sites == 2);
    CHECK(s.site[0].site == &site_a);
    CHECK(s.site[0].bytes == 4 * MiB);
    CHECK(s.site[1].site == &site_b);
    CHECK(s.site[1].bytes == 2 * MiB);
    CHECK(s.site[1].count == 2);
    CHECK(oom_summary().count == 2);
  }
  SECTION("without a cap: the driver's free memory, an upper bound") {
    oom_configure({no_cap, free_3mib});
    record_oom({HookId::cuMemAlloc_v2, 0, 4 * MiB, ledger_capped_bytes(0), 0, false, "driver"});
    const OomSnapshot s = oom_first();
    REQUIRE(s.devices == 1);
    CHECK(s.device[0].largest_block == 3 * MiB);
    CHECK(std::string(s.device[0].basis) == "driver_free");
  }
  oom_configure({nullptr, nullptr});
  oom_reset();
  ledger_reset();
}
