// clock_check.cpp: the hook clock's hardware counter (recorder/clock.h), driven directly:
// rdtsc on x86-64, CNTVCT_EL0 at CNTFRQ_EL0 on AArch64 (under qemu-user in CI). Over a
// 200 ms sleep, ticks_to_ns() of the counter's ticks must agree with CLOCK_MONOTONIC within
// 5 %, and 10^5 readings must never go backwards; CLOCK_MONOTONIC's own path must be the
// identity. Prints one line per failure and exits 1; "ok: ..." otherwise.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "recorder/clock.h"

using namespace cudashim;

namespace {
int failures = 0;
void check(bool ok, const char* what, double a, double b) {
  if (ok) return;
  std::printf("FAIL: %s (%.0f vs %.0f)\n", what, a, b);
  ++failures;
}

// Returns |ticks_to_ns(counter over a 200 ms sleep) - CLOCK_MONOTONIC over it| / the latter.
double error_over_sleep(uint64_t& ns_out, uint64_t& wall_out, uint64_t& ticks_out) {
  const uint64_t t0 = now_ticks(), n0 = monotonic_ns();
  timespec d{0, 200 * 1000 * 1000};
  nanosleep(&d, nullptr);
  const uint64_t t1 = now_ticks(), n1 = monotonic_ns();
  ticks_out = t1 - t0;
  ns_out = ticks_to_ns(t1 - t0);
  wall_out = n1 - n0;
  const double e = static_cast<double>(ns_out) - static_cast<double>(wall_out);
  return (e < 0 ? -e : e) / static_cast<double>(wall_out);
}
}  // namespace

int main() {
  clock_init_as(true);
#if defined(__x86_64__)
  const char* want = "tsc";
#else
  const char* want = "cntvct";
#endif
  check(g_clock_uses_tsc && std::strcmp(clock_name(), want) == 0, "the counter is in use and named for the architecture",
        g_clock_uses_tsc, 1);
  uint64_t ns = 0, wall = 0, ticks = 0;
  const double err = error_over_sleep(ns, wall, ticks);
  check(err < 0.05, "counter ticks converted to ns agree with CLOCK_MONOTONIC within 5 %", static_cast<double>(ns),
        static_cast<double>(wall));
  uint64_t prev = now_ticks(), back = 0;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t t = now_ticks();
    if (t < prev) ++back;
    prev = t;
  }
  check(back == 0, "counter readings never go backwards", static_cast<double>(back), 0);
  std::printf("counter (%s): %llu ticks = %llu ns over %llu ns of CLOCK_MONOTONIC (%.2f %% apart)\n", clock_name(),
              static_cast<unsigned long long>(ticks), static_cast<unsigned long long>(ns),
              static_cast<unsigned long long>(wall), err * 100);

  clock_init_as(false);
  uint64_t mns = 0, mwall = 0, mticks = 0;
  const double merr = error_over_sleep(mns, mwall, mticks);
  check(!g_clock_uses_tsc && std::strcmp(clock_name(), "monotonic") == 0 && mticks == mns,
        "CLOCK_MONOTONIC's ticks are nanoseconds", static_cast<double>(mticks), static_cast<double>(mns));
  check(merr < 0.05, "CLOCK_MONOTONIC agrees with itself", static_cast<double>(mns), static_cast<double>(mwall));
  if (failures) return 1;
  std::printf("ok: the %s counter and CLOCK_MONOTONIC\n", want);
  return 0;
}
