// clock.h: the one clock the recorder reads on a hook's path.
//
// On x86-64 with an invariant TSC that the kernel trusts, a reading is one rdtsc
// (about 10 ns); otherwise CLOCK_MONOTONIC through the vDSO (about 20-25 ns, no
// system call). Two reads per timed call: the TSC keeps a timed sync within its
// 40 ns budget (bench/results/hook_overhead-cpu.md). Readings are "ticks";
// ticks_to_ns() converts them when a report is written.
// On AArch64 the counter is the generic timer's virtual count (CNTVCT_EL0, one mrs; the
// same register the kernel's vDSO reads), at the constant frequency CNTFRQ_EL0 gives,
// chosen when the kernel's clocksource is arch_sys_counter (docs/aarch64.md). Other
// architectures do not build.
#pragma once
#if defined(__x86_64__)
#include <x86intrin.h>
#elif !defined(__aarch64__)
#error "recorder/clock.h: a hardware counter for x86-64 (rdtsc) and AArch64 (cntvct_el0) only"
#endif

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

// True when now_ticks() reads the hardware counter (the TSC, or CNTVCT_EL0 on AArch64).
// Set once by clock_init(), before any hook runs.
extern bool g_clock_uses_tsc;

// Returns the hardware counter: rdtsc on x86-64, CNTVCT_EL0 on AArch64. Hot path. The
// AArch64 read is not ordered against earlier loads (no isb), as rdtsc is not.
inline uint64_t counter_ticks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#endif
}

// Returns the current tick count. Hot path.
inline uint64_t now_ticks() { return g_clock_uses_tsc ? counter_ticks() : monotonic_ns(); }

// Chooses the hardware counter when the kernel's clocksource is that counter (x86-64:
// "tsc", with CPUID's invariant-TSC bit; AArch64: "arch_sys_counter"); records a
// calibration point. Call once at start-up.
void clock_init();

// clock_init() with the choice made by the caller: the counter when `use_counter`, else
// CLOCK_MONOTONIC. For tests that must reach the counter path on any machine.
void clock_init_as(bool use_counter);

// The report's name of the clock in use: "tsc", "cntvct" or "monotonic".
const char* clock_name();

// Converts a tick count (or difference) to nanoseconds: on x86-64 calibrated between
// clock_init() and now, on AArch64 by CNTFRQ_EL0. Identity when the clock is CLOCK_MONOTONIC.
uint64_t ticks_to_ns(uint64_t ticks);

}  // namespace cudashim
