// idle_split_test.cpp: the GPU-idle diagnosis of policy/rules/gpu_time.h decided from a split
// of the steady state's idle time that adds up (issue 36), from CUPTI-like intervals made up
// here for the three shapes of the issue, and the exit summary's step bar (policy::idle_split_bar).
// tests/preload/idle_split.py drives the same shapes through the test-double driver.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "policy/gpu_busy_union.h"
#include "policy/rules/gpu_time.h"

using namespace cudashim;
using recorder::GpuInterval;

namespace {
constexpr uint64_t kUs = 1'000, kMs = 1'000'000;
constexpr uint64_t kStart = 1'000 * kMs;

// `n` steps of `step` ns, each `kernels` kernels of `kernel` ns spread evenly over its first
// `busy_span` ns (the rest of the step: the GPU idle).
std::vector<GpuInterval> steps(int n, uint64_t step, int kernels, uint64_t kernel, uint64_t busy_span) {
  std::vector<GpuInterval> v;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < kernels; ++k) {
      const uint64_t t = kStart + i * step + k * (busy_span / kernels);
      v.push_back({t, t + kernel, 1, 0, GpuInterval::kKernel});
    }
  return v;
}

policy::GpuDeviceTime decide(const std::vector<GpuInterval>& v, const policy::HostActivity& host, uint64_t end) {
  const auto precise = policy::precise_time(v, kStart, end, 5000);
  const auto d = policy::gpu_time({}, {}, host, kStart, end, precise);
  REQUIRE(d.size() == 1);
  return d[0];
}

// The split adds up, and the diagnosis is its largest part.
void check_consistent(const policy::GpuDeviceTime& d) {
  const policy::IdleSplit& s = d.split;
  CHECK(s.after_syncs + s.host_between + s.unexplained == Approx(s.idle).margin(1e-9));
  const std::string g = d.diagnosis;
  if (g == "sync-bound") CHECK((s.after_syncs >= s.host_between && s.after_syncs >= s.unexplained));
  if (g == "launch-bound" || g == "input-bound" || g == "host-bound")
    CHECK((s.host_between > s.after_syncs && s.host_between >= s.unexplained));
  if (g == "unexplained") CHECK((s.unexplained > s.after_syncs && s.unexplained > s.host_between));
}
}  // namespace

TEST_CASE("idle split: a sync that dominates is sync-bound") {
  // 300 steps of 20 ms: 10 ms of kernels, a sync that waits for them (10 ms blocked), then 8 ms
  // of host work before the next launch: the idle after the sync is the whole idle.
  const auto v = steps(300, 20 * kMs, 10, 1 * kMs, 10 * kMs);
  policy::HostActivity host{6500 * kMs, 3000 * kMs, 3000, {"sync.explicit-in-loop at loop.py:9: 300 calls"}};
  host.idle_after_syncs_ns = 300 * 10 * kMs * 95 / 100;  // the drains' idle as the shim measured it
  host.steps = 300;
  const auto d = decide(v, host, kStart + 6000 * kMs);
  CHECK(std::string(d.diagnosis) == "sync-bound");
  CHECK(d.split.idle == Approx(0.5).margin(0.02));
  CHECK(d.split.after_syncs == Approx(0.5).margin(0.03));
  CHECK(d.split.host_between < 0.05);
  CHECK(d.summary.rfind("idle 5", 0) == 0);  // "idle 50%: 50 points after syncs"
  CHECK(d.summary.find("points after syncs") != std::string::npos);
  CHECK(d.summary.find("after syncs") < d.summary.find("host between"));
  REQUIRE(d.findings.size() == 1);
  CHECK(d.findings[0].message == d.summary);
  CHECK(std::string(d.findings[0].fix()).find("syncs the findings name") != std::string::npos);
  check_consistent(d);
}

TEST_CASE("idle split: a launch-heavy loop with a cheap read-back is launch-bound, not sync-bound") {
  // The issue's ResNet-18: 300 steps of 48 ms, 480 kernels of 37 us (37 % busy), a read-back a
  // step with 47 us of GPU idle after it; the host is almost never blocked.
  const auto v = steps(300, 48 * kMs, 480, 37 * kUs, 47 * kMs);
  policy::HostActivity host{14'410 * kMs, 3 * kMs, 300 * 480, {"sync.scalar-readback at train.py:30: 300 calls"}};
  host.idle_after_syncs_ns = 300 * 47 * kUs;
  host.steps = 300;
  const auto d = decide(v, host, kStart + 14'400 * kMs);
  CHECK(std::string(d.diagnosis) == "launch-bound");
  CHECK(d.split.idle == Approx(0.63).margin(0.02));
  CHECK(d.split.after_syncs == Approx(0.001).margin(0.001));
  CHECK(d.split.host_between == Approx(0.63).margin(0.02));
  CHECK(d.split.launches_per_step == Approx(480));
  CHECK(d.split.host_ns_per_launch < 200 * kUs);
  CHECK(d.summary.rfind("idle 63%: 63 points host between launches (launch-bound, 480 kernels a step)", 0) == 0);
  CHECK(std::string(d.findings[0].fix()).find("CUDA graph") != std::string::npos);
  check_consistent(d);
}

TEST_CASE("idle split: host-side batch preparation with a cheap read-back is input-bound") {
  // 300 steps of 20 ms: 25 kernels over 4 ms, a read-back mid-step (0.1 ms of idle after it),
  // then 16 ms of batch preparation on the host with nothing queued.
  const auto v = steps(300, 20 * kMs, 25, 150 * kUs, 4 * kMs);
  policy::HostActivity host{6500 * kMs, 200 * kMs, 300 * 25, {"sync.scalar-readback at train.py:30: 300 calls"}};
  host.idle_after_syncs_ns = 300 * 100 * kUs;
  host.steps = 300;
  const auto d = decide(v, host, kStart + 6000 * kMs);
  CHECK(std::string(d.diagnosis) == "input-bound");
  CHECK(d.split.idle == Approx(0.81).margin(0.02));
  CHECK(d.split.after_syncs == Approx(0.005).margin(0.002));
  CHECK(d.split.host_between == Approx(0.80).margin(0.02));
  CHECK(d.split.host_ns_per_launch > 200 * kUs);
  CHECK(d.summary.find("input-bound, 25 kernels a step") != std::string::npos);
  CHECK(std::string(d.findings[0].fix()).find("DataLoader") != std::string::npos);
  check_consistent(d);
}

TEST_CASE("idle split: a host blocked outside drains leaves the idle unexplained") {
  // The host is blocked 90 % of the run in calls that do not drain (another thread's work, a
  // lock): neither the syncs nor its own time explain a 70 % idle.
  const auto v = steps(300, 20 * kMs, 10, 600 * kUs, 6 * kMs);
  policy::HostActivity host{6500 * kMs, 5850 * kMs, 3000, {}};
  host.steps = 300;
  const auto d = decide(v, host, kStart + 6000 * kMs);
  CHECK(std::string(d.diagnosis) == "unexplained");
  CHECK(d.split.unexplained > 0.5);
  check_consistent(d);
}

TEST_CASE("idle split: the diagnosis never contradicts its split") {
  for (uint64_t after : {0ull, 100ull, 1000ull, 3000ull})
    for (uint64_t blocked : {0ull, 1000ull, 3000ull, 6000ull})
      for (uint64_t launches : {0ull, 300ull, 300'000ull}) {
        const auto v = steps(300, 20 * kMs, 10, 500 * kUs, 6 * kMs);
        policy::HostActivity host{6500 * kMs, blocked * kMs, launches, {}};
        host.idle_after_syncs_ns = after * kMs;
        host.steps = 300;
        check_consistent(decide(v, host, kStart + 6000 * kMs));
      }
}

TEST_CASE("the exit summary's bar: full width is the step") {
  policy::IdleSplit s;
  s.idle = 0.63, s.after_syncs = 0.02, s.host_between = 0.61;
  const std::string bar = policy::idle_split_bar(s, 40);
  CHECK(bar.size() == 40);
  CHECK(bar == std::string(15, '#') + "s" + std::string(24, 'h'));  // 2 points of a step: one cell, not the bar
  s.after_syncs = 0.0002, s.host_between = 0.6298;  // a 0.02 % habit: no cell at all
  CHECK(policy::idle_split_bar(s, 40) == std::string(15, '#') + std::string(25, 'h'));
  s = {};
  CHECK(policy::idle_split_bar(s, 10) == "##########");
}
