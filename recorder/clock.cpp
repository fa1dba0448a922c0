// clock.cpp: choosing and calibrating the hook clock.
#include "recorder/clock.h"

#include <cpuid.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace cudashim {

bool g_clock_uses_tsc = false;

namespace {
uint64_t g_tsc0 = 0, g_ns0 = 0;

// Reads up to `n-1` bytes of `path` into `buf` (NUL-terminated). Returns bytes read.
size_t read_small(const char* path, char* buf, size_t n) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t got = 0;
  while (got + 1 < n) {
    const ssize_t r = read(fd, buf + got, n - 1 - got);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  close(fd);
  buf[got] = '\0';
  return got;
}

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
  read_small("/sys/devices/system/clocksource/clocksource0/current_clocksource", source, sizeof source);
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
