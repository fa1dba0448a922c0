// clock.cpp: choosing and calibrating the hook clock.
#include "recorder/clock.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstring>

#include "symbols/bounded_read.h"

namespace cudashim {

bool g_clock_uses_tsc = false;

namespace {
uint64_t g_tsc0 = 0, g_ns0 = 0;

#if defined(__x86_64__)
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

// The kernel's clocksource when the counter is usable, and whether the CPU says it is.
constexpr const char kCounterSource[] = "tsc";
bool counter_usable() { return invariant_tsc(); }
#else
// The generic timer runs at one constant frequency in every power state (Arm ARM D11.1.2);
// Linux lets EL0 read CNTVCT_EL0 and its vDSO does. CNTFRQ_EL0 is that frequency in Hz,
// set by firmware; 0 would be a broken firmware: no counter then.
uint64_t g_counter_hz = 0;
uint64_t counter_frequency() {
  uint64_t hz;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(hz));
  return hz;
}
constexpr const char kCounterSource[] = "arch_sys_counter";
bool counter_usable() { return counter_frequency() != 0; }
#endif

}  // namespace

void clock_init() {
  char source[64];
  symbols::read_regular_into("/sys/devices/system/clocksource/clocksource0/current_clocksource", source, sizeof source);
  clock_init_as(counter_usable() && std::strncmp(source, kCounterSource, sizeof kCounterSource - 1) == 0);
}

void clock_init_as(bool use_counter) {
#if defined(__aarch64__)
  g_counter_hz = counter_frequency();
  use_counter = use_counter && g_counter_hz != 0;
#endif
  g_clock_uses_tsc = use_counter;
  g_ns0 = monotonic_ns();
  g_tsc0 = counter_ticks();
}

const char* clock_name() {
  if (!g_clock_uses_tsc) return "monotonic";
#if defined(__x86_64__)
  return "tsc";
#else
  return "cntvct";
#endif
}

uint64_t ticks_to_ns(uint64_t ticks) {
  if (!g_clock_uses_tsc) return ticks;
#if defined(__x86_64__)
  const uint64_t dns = monotonic_ns() - g_ns0, dtsc = counter_ticks() - g_tsc0;
  if (dtsc == 0) return ticks;
  return static_cast<uint64_t>(static_cast<long double>(ticks) * dns / dtsc);
#else
  return static_cast<uint64_t>(static_cast<long double>(ticks) * 1e9L / g_counter_hz);
#endif
}

}  // namespace cudashim
