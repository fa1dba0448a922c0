// log.cpp: where the preload library's log lines may go (see log.h).
#include "shim/log.h"

#include <sys/stat.h>

#include "recorder/output_files.h"

namespace cudashim::shim {
namespace {

// What descriptor 2 was when the library was loaded (or a forked child inherited it): the
// job's stderr. Written once by log_capture_stderr() before any second thread exists.
struct StderrIdentity {
  bool open = false;
  dev_t dev = 0;
  ino_t ino = 0;
  dev_t rdev = 0;
};
StderrIdentity g_stderr;

}  // namespace

void log_capture_stderr() {
  struct stat st {};
  g_stderr.open = fstat(2, &st) == 0;
  g_stderr.dev = st.st_dev;
  g_stderr.ino = st.st_ino;
  g_stderr.rdev = st.st_rdev;
}

bool log_may_write(size_t n) {
  if (!g_stderr.open) return false;
  struct stat st {};
  if (fstat(2, &st) != 0 || st.st_dev != g_stderr.dev || st.st_ino != g_stderr.ino || st.st_rdev != g_stderr.rdev)
    return false;
  // A stderr redirected to a file at the file-size limit: the write would raise SIGXFSZ.
  return !S_ISREG(st.st_mode) || recorder::file_room(static_cast<uint64_t>(st.st_size)) >= n;
}

}  // namespace cudashim::shim
