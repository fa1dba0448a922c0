// log.h: the preload library's log lines, on stderr.
// Never called on a hot path: start-up, shutdown, first-time warnings only.
// Formats into a stack buffer and writes it with one write(2): no allocation, no
// stdio lock, safe while the process is single-threaded or not.
#pragma once
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <string_view>

#include "policy/printable.h"

namespace cudashim::shim {

enum class LogLevel : int { error = 0, warn = 1, info = 2, debug = 3, off = -1 };

// The threshold set from CUDASHIM_LOG_LEVEL at start-up.
extern std::atomic<int> g_log_level;

// Notes which file descriptor 2 is (st_dev, st_ino, st_rdev): the job's stderr. Call once
// from the constructor.
void log_capture_stderr();

// True when descriptor 2 is still the file it was at start-up and `n` more bytes fit under the
// file-size limit there. A program that closed its stdio and opened a data file that got
// number 2 must not find cudashim's lines in its data (issue 37.4), and a line must never
// raise SIGXFSZ in the job (issue 37.2). One fstat per line: lines are never on a hot path.
bool log_may_write(size_t n);

// Writes "cudashim[pid]: <label>: <text>\n" with one write(2), when stderr is still the job's
// (log_may_write). Control characters and bytes that are not UTF-8 in the text, whatever
// argument brought them (a path or a value from the environment), are written as \xHH
// (policy/printable.h): a log line never drives the terminal.
// Newlines are kept: one message (the findings summary) spans lines.
inline void write_log_line(const char* label, std::string_view text) {
  char buf[1024];
  auto p = fmt::format_to_n(buf, sizeof buf - 1, "cudashim[{}]: {}: ", getpid(), label);
  size_t n = p.size < sizeof buf - 1 ? p.size : sizeof buf - 1;
  policy::for_each_printable(
      text,
      [&](char c) {
        if (n < sizeof buf - 1) buf[n++] = c;
      },
      std::string_view::npos, /*keep_newlines=*/true);
  buf[n++] = '\n';
  if (log_may_write(n)) (void)!write(2, buf, n);
}

// Writes "cudashim[pid]: <level>: <message>\n" when `level` passes the threshold.
template <typename... Args>
void log_message(LogLevel level, fmt::format_string<Args...> f, Args&&... args) {
  if (static_cast<int>(level) > g_log_level.load(std::memory_order_relaxed)) return;
  static constexpr const char* kNames[] = {"error", "warning", "info", "debug"};
  char text[1024];
  auto r = fmt::format_to_n(text, sizeof text, f, std::forward<Args>(args)...);
  write_log_line(kNames[static_cast<int>(level)], std::string_view(text, r.size < sizeof text ? r.size : sizeof text));
}

// An info finding the user can act on: shown from the `warn` threshold on, like a warning,
// but labelled "info" (an info finding never reads as a warning).
template <typename... Args>
void log_notice(fmt::format_string<Args...> f, Args&&... args) {
  if (static_cast<int>(LogLevel::warn) > g_log_level.load(std::memory_order_relaxed)) return;
  char text[1024];
  auto r = fmt::format_to_n(text, sizeof text, f, std::forward<Args>(args)...);
  write_log_line("info", std::string_view(text, r.size < sizeof text ? r.size : sizeof text));
}

}  // namespace cudashim::shim
