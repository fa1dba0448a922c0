// clock.h: the one clock the recorder reads.
#pragma once
#include <cstdint>
#include <ctime>

namespace cudashim {

// Returns CLOCK_MONOTONIC in nanoseconds. Served by the vDSO: no system call.
inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace cudashim
