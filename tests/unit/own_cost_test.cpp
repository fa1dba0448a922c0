// own_cost_test.cpp: what cudashim itself costs (recorder/own_cost.h, issue 33.4): the CPU time of
// a thread started through start_own_thread is counted while it runs and after it ends, and the
// hooks' estimate is the calls of each kind times that kind's cost.
#include <catch2/catch.hpp>

#include <time.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "catalog/hooks.h"
#include "recorder/own_cost.h"
#include "recorder/own_thread.h"
#include "recorder/thread_slots.h"

namespace rec = cudashim::recorder;
using cudashim::HookId;

namespace {

std::atomic<int> g_phase{0};  // 1: spinning, 2: told to stop, 3: returned

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void* spin(void*) {
  const uint64_t start = thread_cpu_ns();
  g_phase.store(1);
  while (thread_cpu_ns() - start < 40000000ull) {}  // 40 ms of CPU
  while (g_phase.load() != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  g_phase.store(3);
  return nullptr;
}

}  // namespace

TEST_CASE("an own thread's CPU time counts while it runs and after it ends", "[recorder][own_cost]") {
  rec::own_threads_reset();
  REQUIRE(rec::own_threads_cpu_ns() == 0);
  g_phase.store(0);
  REQUIRE(rec::start_own_thread(spin, "cudashim-test", 256 * 1024));
  // Live: read through its per-thread CPU clock once it has spun.
  for (int i = 0; i < 5000 && rec::own_threads_cpu_ns() < 40000000ull; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const uint64_t live = rec::own_threads_cpu_ns();
  CHECK(live >= 40000000ull);
  CHECK(live < 5000000000ull);
  g_phase.store(2);
  while (g_phase.load() != 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past own_thread_end and the thread's exit
  // Ended: its time moved to the total, its slot freed; not lost, not counted twice.
  const uint64_t ended = rec::own_threads_cpu_ns();
  CHECK(ended >= live);
  CHECK(ended < live + 20000000ull);
  rec::own_threads_reset();
}

TEST_CASE("the hooks' estimate is each kind's calls times its cost", "[recorder][own_cost]") {
  rec::own_threads_reset();
  auto t = std::make_unique<rec::CounterTotals>();
  *t = {};
  t->calls[static_cast<size_t>(HookId::cuStreamSynchronize)] = 1000;  // timed
  t->calls[static_cast<size_t>(HookId::cuLaunchKernel)] = 100;       // pass-through timing
  const rec::OwnCost plain = rec::own_cost(*t, 1000000000ull, false);
  const rec::OwnCost py = rec::own_cost(*t, 1000000000ull, true);
  CHECK(plain.hook_calls == 1100);
  CHECK(plain.hooks_ns == 1000 * rec::kHookTimedNs + 100 * rec::kHookPassNs);
  CHECK(py.hooks_ns == plain.hooks_ns + 1000 * rec::kHookPythonFrameNs);
  CHECK(plain.process_cpu_ns > 0);
  CHECK(plain.share_of_wall_pct() == Approx(100.0 * plain.hooks_ns / 1e9));
  CHECK(rec::OwnCost{}.share_of_cpu_pct() == 0.0);
}

TEST_CASE("the flush thread's parts add up by name, and steady is its median round plus the rest", "[recorder][own_cost]") {
  rec::own_threads_reset();
  rec::own_part_add(0, "library_watch", 400, 1000);
  rec::own_part_add(0, "library_watch", 100, 200);
  rec::own_part_add(3, "gpu_sampler", 50, 5000);
  rec::own_part_add(rec::kOwnParts, "out of range", 7, 7);  // ignored
  rec::OwnPart parts[rec::kOwnParts];
  REQUIRE(rec::own_parts(parts) == 2);
  CHECK(std::string(parts[0].name) == "library_watch");
  CHECK(parts[0].cpu_ns == 500);
  CHECK(parts[0].runs == 2);
  CHECK(parts[0].max_ns == 400);
  CHECK(parts[0].wall_ns == 1200);
  CHECK(std::string(parts[1].name) == "gpu_sampler");
  auto t = std::make_unique<rec::CounterTotals>();
  *t = {};
  // No round yet: steady is the whole share.
  rec::OwnCost none = rec::own_cost(*t, 1000000000ull, false);
  CHECK(none.steady.rounds == 0);
  CHECK(none.steady.share_of_wall_pct == Approx(none.share_of_wall_pct()));
  // Rounds of 1 s: a start-up one of 50 ms of CPU, then 1, 2 and 3 ms: the median of the four
  // shares (0.1 %, 0.2 %, 0.3 %, 5 %) is 0.25 %; the one-off is left out of steady, not of the whole.
  rec::own_round_add(50000000ull, 1000000000ull, 50000000ull);
  rec::own_round_add(1000000ull, 1000000000ull, 51000000ull);
  rec::own_round_add(3000000ull, 1000000000ull, 54000000ull);
  rec::own_round_add(2000000ull, 1000000000ull, 56000000ull);
  t->calls[static_cast<size_t>(HookId::cuLaunchKernel)] = 1000000;  // 7 ms estimated over 10 s: 0.07 %
  const rec::OwnCost c = rec::own_cost(*t, 10000000000ull, false);
  CHECK(c.steady.rounds == 4);
  CHECK(c.steady.flush_pct == Approx(0.25));
  // The own threads are not live here (reset), so the flush thread's 56 ms is capped at them (0):
  // steady = 0.25 % + the hooks' 0.07 %.
  CHECK(c.flush_cpu_ns == 0);
  CHECK(c.steady.share_of_wall_pct == Approx(0.25 + 0.07));
  rec::own_threads_reset();
  CHECK(rec::own_parts(parts) == 0);
  CHECK(rec::own_cost(*t, 10000000000ull, false).steady.rounds == 0);
}
