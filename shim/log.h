// log.h: the preload library's log lines, on stderr.
// Never called on a hot path: start-up, shutdown, first-time warnings only.
// Formats into a stack buffer and writes it with one write(2): no allocation, no
// stdio lock, safe while the process is single-threaded or not.
#pragma once
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>

namespace cudashim::shim {

enum class LogLevel : int { error = 0, warn = 1, info = 2, debug = 3, off = -1 };

// The threshold set from CUDASHIM_LOG_LEVEL at start-up.
extern std::atomic<int> g_log_level;

// Writes "cudashim[pid]: <level>: <message>\n" when `level` passes the threshold.
template <typename... Args>
void log_message(LogLevel level, fmt::format_string<Args...> f, Args&&... args) {
  if (static_cast<int>(level) > g_log_level.load(std::memory_order_relaxed)) return;
  static constexpr const char* kNames[] = {"error", "warning", "info", "debug"};
  char buf[1024];
  auto r = fmt::format_to_n(buf, sizeof buf - 1, "cudashim[{}]: {}: ", getpid(), kNames[static_cast<int>(level)]);
  size_t n = r.size < sizeof buf - 1 ? r.size : sizeof buf - 1;
  auto r2 = fmt::format_to_n(buf + n, sizeof buf - 1 - n, f, std::forward<Args>(args)...);
  n += r2.size < sizeof buf - 1 - n ? r2.size : sizeof buf - 1 - n;
  buf[n++] = '\n';
  (void)!write(2, buf, n);
}

}  // namespace cudashim::shim
