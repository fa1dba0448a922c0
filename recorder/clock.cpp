// clock.cpp: choosing and calibrating the hook clock.
#include "recorder/clock.h"

#include <cpuid.h>

#include <cstring>

#include "symbols/bounded_read.h"

namespace cudashim {

bool g_clock_uses_tsc = false;

namespace {
uint64_t g_tsc0 = 0, g_ns0 = 0;

// True when CPUID says the TSC is invariant (CPUID.80000007H:EDX[8]): constant
// rate, and running in every power state. Reading /proc/cpuinfo instead costs
// milliseconds on some VMs (the kernel samples every CPU's frequency): measured
// +14.7 ms on /bin/true on the GPU host before this (gpu/results/...-run2).
bool invariant_tsc() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 8)) != 0;
}

}  // namespace

void clock_init() {
  char source[64];
  symbols::read_regular_into("/sys/devices/system/clocksource/clocksource0/current_clocksource", source, sizeof source);
  g_clock_uses_tsc = invariant_tsc() && std::strncmp(source, "tsc", 3) == 0;
  g_ns0 = monotonic_ns();
  g_tsc0 = __rdtsc();
}

uint64_t ticks_to_ns(uint64_t ticks) {
  if (!g_clock_uses_tsc) return ticks;
  const uint64_t dns = monotonic_ns() - g_ns0, dtsc = __rdtsc() - g_tsc0;
  if (dtsc == 0) return ticks;
  return static_cast<uint64_t>(static_cast<long double>(ticks) * dns / dtsc);
}

}  // namespace cudashim
