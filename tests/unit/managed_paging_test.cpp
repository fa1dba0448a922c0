// managed_paging_test.cpp: the estimate, the window, the per-site split and the
// memory.managed-paging threshold of policy/rules/managed_paging.h, from PCIe readings made up here;
// and the precise mode's per-site table (recorder/managed_migration.h).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "policy/rules/managed_paging.h"
#include "recorder/managed_migration.h"

using namespace cudashim;
using recorder::GpuPcieSample;

namespace {
constexpr uint64_t kSec = 1'000'000'000ull;
constexpr uint64_t kStart = 1 * kSec, kEnd = 21 * kSec;
int g_a, g_b;  // stand-ins for two call sites (opaque pointers to the policy)

// `n` readings of device 0, one a second from kStart + 1 s, with `site_bytes` live at &g_a
// (and `other` at &g_b when not 0).
std::vector<GpuPcieSample> readings(int n, uint32_t rx, uint32_t tx, uint64_t site_bytes, uint64_t other = 0) {
  std::vector<GpuPcieSample> v;
  for (int i = 1; i <= n; ++i) {
    GpuPcieSample p{};
    p.t_ns = kStart + i * kSec, p.interval_ns = kSec, p.device = 0, p.rx_kbps = rx, p.tx_kbps = tx;
    p.managed_live_bytes = site_bytes + other;
    p.sites[0] = {&g_a, site_bytes}, p.nsites = 1;
    if (other) p.sites[1] = {&g_b, other}, p.nsites = 2;
    v.push_back(p);
  }
  return v;
}
}  // namespace

TEST_CASE("managed paging: the estimate, the split and the threshold") {
  const auto& t = policy::managed_paging_thresholds();
  SECTION("bytes each way are KB/s x 1024 x the interval, attributed to the live site") {
    auto m = policy::managed_paging(readings(20, 400000, 100000, 64 << 20), {}, 0, kStart, kEnd);
    REQUIRE(m.size() == 1);
    CHECK(m[0].samples == 20);
    CHECK(m[0].est_htod_bytes == 20ull * 400000 * 1024);
    CHECK(m[0].est_dtoh_bytes == 20ull * 100000 * 1024);
    CHECK(m[0].paging_samples == 20);
    CHECK(m[0].paging_share == Approx(1.0));
    REQUIRE(m[0].sites.size() == 1);
    CHECK(m[0].sites[0].site == &g_a);
    CHECK_FALSE(m[0].sites[0].shared);
    CHECK(m[0].finding);
  }
  SECTION("below the floor: readings and bytes, no paging, no finding") {
    const uint32_t below = static_cast<uint32_t>(t.floor_kbps) - 1;
    auto m = policy::managed_paging(readings(20, below, 0, 64 << 20), {}, 0, kStart, kEnd);
    REQUIRE(m.size() == 1);
    CHECK(m[0].est_htod_bytes > 0);
    CHECK(m[0].paging_samples == 0);
    CHECK(m[0].sites.empty());
    CHECK_FALSE(m[0].finding);
  }
  SECTION("the share threshold: 5 paging seconds of 20 warn, 4 do not") {
    CHECK(policy::managed_paging(readings(5, 400000, 0, 1 << 20), {}, 0, kStart, kEnd)[0].finding);
    CHECK_FALSE(policy::managed_paging(readings(4, 400000, 0, 1 << 20), {}, 0, kStart, kEnd)[0].finding);
  }
  SECTION("the window is the device's steady state when it has one") {
    policy::GpuDeviceTime g;
    g.device = 0, g.steady.from_ns = kStart + 10 * kSec, g.steady.to_ns = kStart + 14 * kSec, g.steady.samples = 24;
    auto m = policy::managed_paging(readings(5, 400000, 0, 1 << 20), {g}, 0, kStart, kEnd);
    CHECK(m[0].steady);
    CHECK(m[0].paging_samples == 0);  // every reading lies before the steady window
    CHECK_FALSE(m[0].finding);
  }
  SECTION("two live sites share each reading by their live bytes") {
    auto m = policy::managed_paging(readings(10, 400000, 0, 48 << 20, 16 << 20), {}, 0, kStart, kEnd);
    REQUIRE(m[0].sites.size() == 2);
    CHECK(m[0].sites[0].site == &g_a);
    CHECK(m[0].sites[0].shared);
    CHECK(m[0].sites[1].shared);
    CHECK(static_cast<double>(m[0].sites[0].est_htod_bytes) == Approx(3.0 * m[0].sites[1].est_htod_bytes));
  }
  SECTION("copies that can explain half the traffic keep the finding off") {
    const uint64_t traffic = 20ull * 400000 * 1024;
    CHECK_FALSE(policy::managed_paging(readings(20, 400000, 0, 1 << 20), {}, traffic / 2, kStart, kEnd)[0].finding);
    CHECK(policy::managed_paging(readings(20, 400000, 0, 1 << 20), {}, traffic / 4, kStart, kEnd)[0].finding);
  }
}

TEST_CASE("managed migrations: the precise mode's per-site table") {
  recorder::managed_migration_reset();
  CHECK(recorder::managed_migrations().empty());
  REQUIRE(recorder::managed_add_migration({&g_a, 0, 4096, 0, 1, 0}));
  REQUIRE(recorder::managed_add_migration({&g_a, 0, 8192, 2048, 0, 3}));
  REQUIRE(recorder::managed_add_migration({&g_b, 1, 0, 65536, 0, 0}));
  const auto rows = recorder::managed_migrations();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].site == &g_a);
  CHECK(rows[0].htod_bytes == 12288);
  CHECK(rows[0].dtoh_bytes == 2048);
  CHECK(rows[0].cpu_page_faults == 1);
  CHECK(rows[0].gpu_page_faults == 3);
  CHECK(rows[1].device == 1);
  CHECK(rows[1].dtoh_bytes == 65536);
  for (int i = 0; i < recorder::kMaxMigrationSites; ++i) recorder::managed_add_migration({reinterpret_cast<const void*>(uintptr_t{0x1000} + i), 0, 1, 0, 0, 0});
  CHECK(recorder::managed_migration_dropped() == 2);
  recorder::managed_migration_reset();
  CHECK(recorder::managed_migrations().empty());
}
