// text_units.h: bytes and durations as people read them, for the summary and the page.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace cudashim::tools {

// "512 B", "1.5 KiB", "3.2 GiB".
inline std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

// "850 ns", "12.5 us", "3.1 ms", "2.00 s".
inline std::string human_ns(uint64_t ns) {
  if (ns >= 1000000000ull) return fmt::format("{:.2f} s", ns / 1e9);
  if (ns >= 1000000ull) return fmt::format("{:.1f} ms", ns / 1e6);
  if (ns >= 1000ull) return fmt::format("{:.1f} us", ns / 1e3);
  return fmt::format("{} ns", ns);
}

// A CUDA version as cuDriverGetVersion and cudaRuntimeGetVersion give it: 12090 -> "12.9".
inline std::string cuda_version_text(int64_t v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

}  // namespace cudashim::tools
