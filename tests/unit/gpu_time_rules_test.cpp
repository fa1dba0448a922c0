// gpu_time_rules_test.cpp: the busy shares, the steady window, the diagnosis and the two
// findings of policy/rules/gpu_time.h at their thresholds, from samples made up here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "policy/rules/gpu_time.h"
#include "symbols/nvml_api.h"

using namespace cudashim;
using recorder::GpuHealthSample;
using recorder::GpuUtilSample;

namespace {
constexpr uint64_t kPeriod = 166'666'667;  // 1/6 s
constexpr uint64_t kStart = 1'000'000'000;

// `n` device samples of device 0 at `pct`, one per period from kStart.
std::vector<GpuUtilSample> util(int n, uint8_t pct, uint64_t from = kStart) {
  std::vector<GpuUtilSample> v;
  for (int i = 1; i <= n; ++i) v.push_back({from + i * kPeriod, 0, pct, false});
  return v;
}
std::vector<GpuHealthSample> health(int n, uint64_t reasons_first, int first, uint64_t reasons_rest) {
  std::vector<GpuHealthSample> v;
  for (int i = 1; i <= n; ++i) {
    GpuHealthSample s{};
    s.t_ns = kStart + 5'000'000'000ull + i * 350'000'000ull;  // inside the steady window (4.1 s to 20 s)
    s.device = 0;
    s.have = GpuHealthSample::kReasons | GpuHealthSample::kClocks;
    s.clock_event_reasons = i <= first ? reasons_first : reasons_rest;
    s.sm_mhz = i <= first ? 1500 : 1980;
    v.push_back(s);
  }
  return v;
}
bool has(const policy::GpuDeviceTime& d, FindingId f) {
  for (const Finding& x : d.findings)
    if (x.id == f) return true;
  return false;
}
}  // namespace

TEST_CASE("gpu time: shares, steady window and the gpu.idle threshold") {
  policy::HostActivity host{10'000'000'000ull, 1'000'000'000ull, 600, {}};
  SECTION("idle at the threshold warns input-bound, one point below does not") {
    auto at = policy::gpu_time(util(60, 70), {}, host, kStart, kStart + 20'000'000'000ull);
    REQUIRE(at.size() == 1);
    CHECK(at[0].run.samples == 60);
    CHECK(at[0].run.busy == Approx(0.70));
    CHECK(at[0].steady.busy == Approx(0.70));
    CHECK(at[0].sample_period_ns == kPeriod);
    CHECK(has(at[0], FindingId::gpu_idle));
    CHECK(std::string(at[0].diagnosis) == "input-bound");  // 600 launches, ms of host time each
    auto below = policy::gpu_time(util(60, 71), {}, host, kStart, kStart + 20'000'000'000ull);
    CHECK_FALSE(has(below[0], FindingId::gpu_idle));
    CHECK(std::string(below[0].diagnosis) == "gpu-bound");
  }
  SECTION("the steady window leaves out the first fifth and the idle tail") {
    auto v = util(20, 0);                          // start-up: idle
    auto busy = util(50, 90, kStart + 20 * kPeriod);  // the loop
    v.insert(v.end(), busy.begin(), busy.end());
    auto tail = util(30, 0, kStart + 70 * kPeriod);  // teardown after the last kernel
    v.insert(v.end(), tail.begin(), tail.end());
    auto d = policy::gpu_time(v, {}, host, kStart, kStart + 200 * kPeriod)[0];
    CHECK(d.run.busy == Approx(0.45));
    CHECK(d.steady.samples == 40);  // busy from period 21 to 70: from 21 + 49/5 to 70
    CHECK(d.steady.busy == Approx(0.90));
    CHECK_FALSE(has(d, FindingId::gpu_idle));
  }
  SECTION("too few samples decide nothing") {
    auto d = policy::gpu_time(util(10, 5), {}, host, kStart, kStart + 10'000'000'000ull)[0];
    CHECK(std::string(d.diagnosis) == "unknown");
    CHECK(d.findings.empty());
  }
  SECTION("the idle measured after syncs makes it sync-bound; tiny kernels launch-bound") {
    policy::HostActivity syncs = host;
    syncs.draining = {"sync.explicit-in-loop at loop.cpp:12: 100 calls, blocked 30.0 ms"};
    syncs.idle_after_syncs_ns = 7'000'000'000ull;  // the whole idle of the steady window follows the syncs
    auto d = policy::gpu_time(util(60, 20), {}, syncs, kStart, kStart + 10 * 1'000'000'000ull)[0];
    CHECK(std::string(d.diagnosis) == "sync-bound");
    CHECK(std::find(d.evidence.begin(), d.evidence.end(), syncs.draining[0]) != d.evidence.end());
    policy::HostActivity launches = syncs;
    launches.idle_after_syncs_ns = 0;  // the same syncs, with no idle after them
    launches.launches = 10'000'000;  // 2 s busy over 10 M launches: 0.2 us each
    d = policy::gpu_time(util(60, 20), {}, launches, kStart, kStart + 10 * 1'000'000'000ull)[0];
    CHECK(std::string(d.diagnosis) == "launch-bound");
    // NVML's 80 % idle is only the floor there (kernels shorter than it resolves), and says so.
    CHECK(d.idle_lower_bound);
    CHECK(std::any_of(d.evidence.begin(), d.evidence.end(),
                      [](const std::string& e) { return e.find("idle at least 80%") != std::string::npos; }));
    d = policy::gpu_time(util(60, 20), {}, syncs, kStart, kStart + 10 * 1'000'000'000ull)[0];
    CHECK_FALSE(d.idle_lower_bound);  // sync-bound: NVML's figure stands
  }
}

TEST_CASE("gpu time: gpu.clocks-throttled at its threshold") {
  policy::HostActivity host{10'000'000'000ull, 0, 600, {}};
  const auto u = util(120, 95);  // 20 s busy
  SECTION("power cap in 4 of 40 samples (10%) warns; 3 of 40 does not") {
    auto d = policy::gpu_time(u, health(40, symbols::kClockEventSwPowerCap, 4, 0), host, kStart, kStart + 30'000'000'000ull)[0];
    CHECK(d.health_samples == 40);
    CHECK(d.throttled_samples == 4);
    CHECK(has(d, FindingId::gpu_clocks_throttled));
    CHECK(policy::clock_event_names(d.slowdown_reasons) == "sw_power_cap");
    CHECK(d.sm_mhz_min == 1500);
    d = policy::gpu_time(u, health(40, symbols::kClockEventSwPowerCap, 3, 0), host, kStart, kStart + 30'000'000'000ull)[0];
    CHECK_FALSE(has(d, FindingId::gpu_clocks_throttled));
  }
  SECTION("idle clocks, application clocks and sync boost never count") {
    const uint64_t benign = symbols::kClockEventGpuIdle | symbols::kClockEventAppClocks | symbols::kClockEventSyncBoost;
    auto d = policy::gpu_time(u, health(40, benign, 40, benign), host, kStart, kStart + 30'000'000'000ull)[0];
    CHECK(d.throttled_samples == 0);
    CHECK_FALSE(has(d, FindingId::gpu_clocks_throttled));
  }
  SECTION("hardware slowdown and thermal count") {
    auto d = policy::gpu_time(u, health(40, symbols::kClockEventHwSlowdown | symbols::kClockEventHwThermal, 40, 0), host,
                              kStart, kStart + 30'000'000'000ull)[0];
    CHECK(has(d, FindingId::gpu_clocks_throttled));
    CHECK(policy::clock_event_names(d.slowdown_reasons) == "hw_slowdown+hw_thermal");
  }
}
