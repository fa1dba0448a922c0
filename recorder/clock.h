// clock.h: the one clock the recorder reads on a hook's path.
//
// On x86-64 with an invariant TSC that the kernel trusts, a reading is one rdtsc
// (about 10 ns); otherwise CLOCK_MONOTONIC through the vDSO (about 20-25 ns, no
// system call). Two reads per timed call: the TSC keeps a timed sync within its
// 40 ns budget (bench/results/hook_overhead-cpu.md). Readings are "ticks";
// ticks_to_ns() converts them when a report is written.
#pragma once
#include <x86intrin.h>

#include <atomic>
#include <cstdint>
#include <ctime>

namespace cudashim {

// Returns CLOCK_MONOTONIC in nanoseconds.
inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

extern bool g_clock_uses_tsc;  // set once by clock_init(), before any hook runs

// Returns the current tick count. Hot path.
inline uint64_t now_ticks() { return g_clock_uses_tsc ? __rdtsc() : monotonic_ns(); }

// Chooses the TSC when /proc/cpuinfo has constant_tsc and nonstop_tsc and the
// kernel's clocksource is tsc; records a calibration point. Call once at start-up.
void clock_init();

// Converts a tick count (or difference) to nanoseconds, calibrated between
// clock_init() and now. Identity when the clock is CLOCK_MONOTONIC.
uint64_t ticks_to_ns(uint64_t ticks);

}  // namespace cudashim
