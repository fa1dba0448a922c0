// no_cuda_record.cpp: see no_cuda_record.h.
#include "recorder/no_cuda_record.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "recorder/output_files.h"
#include "recorder/recorder.h"

namespace cudashim::recorder {
namespace {

// Plain arrays (no constructor, no guard): read on an end path, in a signal handler's
// context at worst. Written only by no_cuda_configure, before a second thread of this
// process exists (the constructor, a forked child).
char g_path[4096];
char g_line[96];
size_t g_line_len = 0;  // 0: nothing to write
int g_pid = 0;          // the process the line is for
std::atomic<bool> g_written{false};

// Appends `text` to `out` (of `size`) at `*at`, as far as it fits (one byte kept for the nul).
void put(char* out, size_t size, size_t* at, const char* text) {
  for (; *text != '\0' && *at + 1 < size; ++text) out[(*at)++] = *text;
}

bool plain_name_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || std::strchr("._+@=,:-", c) != nullptr;
}

}  // namespace

void no_cuda_name(const char* argv0, const char* exe, char* out, size_t size) {
  if (size == 0) return;
  const char* from = argv0 != nullptr && *argv0 != '\0' ? argv0 : exe;
  if (from == nullptr) from = "";
  if (const char* slash = std::strrchr(from, '/')) from = slash + 1;
  if (*from == '-') ++from;  // a login shell's argv[0]: "-bash"
  size_t n = 0;
  for (; *from != '\0' && n < 48 && n + 1 < size; ++from) out[n++] = plain_name_byte(*from) ? *from : '_';
  if (n == 0 && size > 1) out[n++] = '?';
  out[n] = '\0';
}

void no_cuda_configure(bool on, const char* out_dir, const ProcessInfo& info) {
  g_line_len = 0;
  g_written.store(false, std::memory_order_relaxed);
  if (!on || out_dir == nullptr || *out_dir == '\0') return;
  size_t at = 0;
  put(g_path, sizeof g_path, &at, out_dir);
  put(g_path, sizeof g_path, &at, "/cudashim-");
  put(g_path, sizeof g_path, &at, info.host.empty() ? "host" : info.host.c_str());
  put(g_path, sizeof g_path, &at, kNoCudaSuffix);
  g_path[at] = '\0';
  if (at + 1 >= sizeof g_path) return;  // cut short: no file of that name
  char name[64];
  no_cuda_name(info.argv.empty() ? nullptr : info.argv[0].c_str(), info.exe.c_str(), name, sizeof name);
  const std::string pid = std::to_string(info.pid);
  at = 0;
  put(g_line, sizeof g_line, &at, pid.c_str());
  put(g_line, sizeof g_line, &at, "\t");
  put(g_line, sizeof g_line, &at, name);
  put(g_line, sizeof g_line, &at, "\n");
  g_line[at] = '\0';
  g_pid = info.pid;
  g_line_len = at;
}

void no_cuda_note_end() {
  if (g_line_len == 0 || getpid() != g_pid || has_activity()) return;
  if (g_written.exchange(true, std::memory_order_acq_rel)) return;
  const int saved = errno;
  // O_NONBLOCK: a FIFO put there fails at once (ENXIO) instead of blocking the process's end.
  const int fd = open(g_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
  if (fd >= 0) {
    struct stat st {};
    // Room for this line even if other processes append meanwhile (a line is < 100 bytes).
    const uint64_t size = fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : kNoCudaFileLimit;
    if (S_ISREG(st.st_mode) && size + g_line_len <= kNoCudaFileLimit && file_room(size + 4096) >= g_line_len) {
      const ssize_t n = write(fd, g_line, g_line_len);  // O_APPEND: one write of a short line lands whole
      (void)n;
    }
    close(fd);
  }
  errno = saved;
}

}  // namespace cudashim::recorder
