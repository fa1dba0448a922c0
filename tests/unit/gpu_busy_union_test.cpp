// gpu_busy_union_test.cpp: the precise mode's busy union (policy/gpu_busy_union.h) and the
// diagnosis of policy/rules/gpu_time.h when CUPTI's intervals are there, from intervals made up here.
#include <catch2/catch.hpp>

#include <vector>

#include "policy/gpu_busy_union.h"
#include "policy/rules/gpu_time.h"

using namespace cudashim;
using recorder::GpuInterval;

namespace {
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kStart = 1'000 * kMs;

// `n` steps of `step` ns, each with one kernel of `kernel` ns at its start, on device 0.
std::vector<GpuInterval> steps(int n, uint64_t step, uint64_t kernel, uint32_t context = 1) {
  std::vector<GpuInterval> v;
  for (int i = 0; i < n; ++i)
    v.push_back({kStart + i * step, kStart + i * step + kernel, context, 0, GpuInterval::kKernel});
  return v;
}
}  // namespace

TEST_CASE("busy union: overlapping intervals count once, clipped to the window") {
  std::vector<std::pair<uint64_t, uint64_t>> spans = {{10, 20}, {15, 30}, {40, 50}, {45, 46}, {60, 70}};
  CHECK(policy::busy_union_ns(spans, 0, 100) == 20 + 10 + 10);
  CHECK(policy::busy_union_ns(spans, 25, 65) == 5 + 10 + 5);
  CHECK(policy::busy_union_ns(spans, 70, 100) == 0);
}

TEST_CASE("precise time: busy share of the steady window, kernels, short kernels, contexts") {
  auto v = steps(100, 10 * kMs, 2 * kMs);
  // a second stream's kernel overlapping the first step's: no double count
  v.push_back({kStart + 1 * kMs, kStart + 3 * kMs, 2, 0, GpuInterval::kKernel});
  v.push_back({kStart + 505 * kMs, kStart + 505 * kMs + 2000, 1, 0, GpuInterval::kKernel});  // 2 us, between steps: short
  v.push_back({kStart + 25 * kMs, kStart + 26 * kMs, 1, 0, GpuInterval::kCopy});  // a copy between steps
  const auto out = policy::precise_time(v, kStart, kStart + 1000 * kMs, 5000);
  REQUIRE(out.size() == 1);
  const auto& d = out[0];
  CHECK(d.kernels == 102);
  CHECK(d.short_kernels == 1);
  CHECK(d.copies == 1);
  CHECK(d.run.busy_ns == 100 * 2 * kMs + 1 * kMs + 1 * kMs + 2000);
  CHECK(d.steady.to_ns == kStart + 99 * 10 * kMs + 2 * kMs);
  CHECK(d.steady.busy() == Approx(0.2).margin(0.01));
  REQUIRE(d.contexts.size() == 2);
  CHECK(d.contexts[1].run.busy_ns == 2 * kMs);
}

TEST_CASE("the diagnosis uses CUPTI's intervals when they are there") {
  const policy::HostActivity host{20'000 * kMs, 0, 1000, {}};
  // NVML says 95 % busy (no finding); CUPTI's kernels fill 20 % of each step: gpu.idle, input-bound.
  std::vector<recorder::GpuUtilSample> util;
  for (int i = 1; i <= 30; ++i) util.push_back({kStart + i * 166 * kMs, 0, 95, false});
  SECTION("long kernels: input-bound from CUPTI") {
    const auto precise = policy::precise_time(steps(500, 10 * kMs, 2 * kMs), kStart, kStart + 6000 * kMs, 5000);
    const auto d = policy::gpu_time(util, {}, host, kStart, kStart + 6000 * kMs, precise);
    REQUIRE(d.size() == 1);
    CHECK(d[0].has_precise);
    CHECK(d[0].diagnosis == std::string("input-bound"));  // 3 ms of host time a launch: work elsewhere
    REQUIRE(d[0].findings.size() == 1);
    CHECK(d[0].findings[0].id == FindingId::gpu_idle);
  }
  SECTION("short kernels: launch-bound from CUPTI") {
    const auto precise = policy::precise_time(steps(500, 10 * kMs, 3000), kStart, kStart + 6000 * kMs, 5000);
    const auto d = policy::gpu_time(util, {}, host, kStart, kStart + 6000 * kMs, precise);
    CHECK(d[0].diagnosis == std::string("launch-bound"));
  }
  SECTION("without CUPTI: NVML's share decides (gpu-bound)") {
    const auto d = policy::gpu_time(util, {}, host, kStart, kStart + 6000 * kMs);
    CHECK_FALSE(d[0].has_precise);
    CHECK(d[0].diagnosis == std::string("gpu-bound"));
  }
  SECTION("too few kernels: unknown") {
    const auto precise = policy::precise_time(steps(5, 10 * kMs, 2 * kMs), kStart, kStart + 6000 * kMs, 5000);
    const auto d = policy::gpu_time(util, {}, host, kStart, kStart + 6000 * kMs, precise);
    CHECK(d[0].diagnosis == std::string("unknown"));
  }
}

TEST_CASE("the steady window is the host's loop when there is one") {
  // Set-up: 2 s of back-to-back kernels (model building, warm-up, autotuning), 4 s of host-only
  // work, then the loop: 3 s of steps of 10 ms with 1.5 ms of kernel each (15 % busy). The rule
  // of the first fifth of the busy span puts 3.8 s of the idle set-up into the steady window,
  // as on the H200's input-bound loop (3.7 s of set-up in: 94 % idle against the profiler's 87 %).
  std::vector<GpuInterval> v;
  for (int i = 0; i < 200; ++i) v.push_back({kStart + i * 10 * kMs, kStart + (i + 1) * 10 * kMs, 1, 0, GpuInterval::kKernel});
  const uint64_t loop0 = kStart + 6000 * kMs;
  for (int i = 0; i < 300; ++i)
    v.push_back({loop0 + i * 10 * kMs, loop0 + i * 10 * kMs + 1500 * 1000, 1, 0, GpuInterval::kKernel});
  const uint64_t end = loop0 + 3000 * kMs;
  SECTION("without a host loop: the first fifth's rule") {
    const auto out = policy::precise_time(v, kStart, end + 500 * kMs, 5000);
    REQUIRE(out.size() == 1);
    CHECK(out[0].steady.busy() < 0.12);  // 3.8 s of idle set-up inside: about 9 % busy
  }
  SECTION("with the host's loop: its share") {
    const auto out = policy::precise_time(v, kStart, end + 500 * kMs, 5000, loop0, end);
    REQUIRE(out.size() == 1);
    CHECK(out[0].steady.from_ns == loop0);
    CHECK(out[0].steady.to_ns == end);
    CHECK(out[0].steady.busy() == Approx(0.15).margin(0.005));
  }
  SECTION("NVML's samples over the same windows") {
    std::vector<recorder::GpuUtilSample> util;
    for (uint64_t t = kStart + 100 * kMs; t < end; t += 200 * kMs) {
      const bool setup = t < kStart + 2000 * kMs, looping = t >= loop0;
      util.push_back({t, 0, static_cast<uint8_t>(setup ? 100 : looping ? 15 : 0), false});
    }
    policy::HostActivity host{10'000 * kMs, 0, 1000, {}};
    const auto before = policy::gpu_time(util, {}, host, kStart, end + 500 * kMs);
    host.loop_from_ns = loop0, host.loop_to_ns = end;
    const auto after = policy::gpu_time(util, {}, host, kStart, end + 500 * kMs);
    REQUIRE(before.size() == 1);
    REQUIRE(after.size() == 1);
    CHECK(before[0].steady.busy < 0.10);
    CHECK(after[0].steady.busy == Approx(0.15).margin(0.01));
    CHECK(after[0].steady.samples == 15);
  }
}
