// output_files.cpp: output names, exclusive creation, the no-replace atomic write.
#include "recorder/output_files.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cudashim::recorder {
namespace {

constexpr const char* kSuffixes[] = {".json", ".ndjson", ".trace", "-crash.json"};

// Fixed buffers, no allocation: the flight record claims and creates in a signal handler.
char g_plain[4096];      // <dir>/cudashim-<host>-<pid>[-r<rank>]
char g_base[4096 + 64];  // the claimed base (g_plain, or g_plain-t<ms>[-<n>])
char g_dir[4096];        // the folder, created when missing
uint64_t g_start_ms = 0;
std::atomic<int> g_claim{0};  // 0 not claimed, 1 claiming, 2 claimed

struct Buf {
  char* p;
  size_t cap, n = 0;
  void s(const char* t) {
    for (; *t && n + 1 < cap; ++t) p[n++] = *t;
    p[n] = '\0';
  }
  void u(uint64_t v) {
    char tmp[24];
    int i = 0;
    do tmp[i++] = static_cast<char>('0' + v % 10); while ((v /= 10) && i < 24);
    while (i > 0 && n + 1 < cap) p[n++] = tmp[--i];
    p[n] = '\0';
  }
};

// True when <base><suffix> exists for none of the four suffixes.
bool base_free(const char* base) {
  char path[sizeof g_base + 16];
  for (const char* suffix : kSuffixes) {
    Buf b{path, sizeof path};
    b.s(base);
    b.s(suffix);
    struct stat st;
    if (lstat(path, &st) == 0 || errno != ENOENT) return false;
  }
  return true;
}

// Sets g_base to candidate `k`: 0 the plain base, 1 -t<ms>, k>1 -t<ms>-k.
void set_candidate(int k) {
  Buf b{g_base, sizeof g_base};
  b.s(g_plain);
  if (k >= 1) {
    b.s("-t");
    b.u(g_start_ms);
  }
  if (k >= 2) {
    b.s("-");
    b.u(static_cast<uint64_t>(k));
  }
}

// The files this process put in place with write_file_atomically: only these may be replaced.
// Two tables: the outputs under the process's own base (the exit report and trace, which must
// stay replaceable: issue 37.5, after 64 explicit cudashim_write_report paths the exit report
// had been forgotten and failed with EEXIST), and a ring of the latest other paths.
struct Created {
  dev_t dev;
  ino_t ino;
  pid_t pid;
};
Created g_own[4];        // by suffix: kSuffixes' order
Created g_created[64];   // other paths, the oldest replaced first
size_t g_ncreated = 0, g_next_created = 0;
pthread_mutex_t g_created_mu = PTHREAD_MUTEX_INITIALIZER;

bool same(const Created& c, const struct stat& st, pid_t me) {
  return c.pid == me && c.dev == st.st_dev && c.ino == st.st_ino;
}

bool created_here(const struct stat& st) {
  const pid_t me = getpid();
  for (const Created& c : g_own)
    if (same(c, st, me)) return true;
  for (size_t i = 0; i < g_ncreated; ++i)
    if (same(g_created[i], st, me)) return true;
  return false;
}

// The index in kSuffixes of `path` when it is <claimed base><suffix>, else -1.
int own_output(const std::string& path) {
  if (g_claim.load(std::memory_order_acquire) != 2) return -1;
  const size_t n = std::strlen(g_base);
  if (path.size() <= n || path.compare(0, n, g_base) != 0) return -1;
  for (int i = 0; i < 4; ++i)
    if (path.compare(n, std::string::npos, kSuffixes[i]) == 0) return i;
  return -1;
}

void remember(const std::string& path, const struct stat& st) {
  const pid_t me = getpid();
  if (const int own = own_output(path); own >= 0) {
    g_own[own] = {st.st_dev, st.st_ino, me};
    return;
  }
  for (size_t i = 0; i < g_ncreated; ++i)
    if (same(g_created[i], st, me)) return;
  for (size_t i = 0; i < g_ncreated; ++i)
    if (g_created[i].pid != me) {  // a parent's entry, inherited through fork
      g_created[i] = {st.st_dev, st.st_ino, me};
      return;
    }
  constexpr size_t kCap = sizeof g_created / sizeof g_created[0];
  if (g_ncreated < kCap) {
    g_created[g_ncreated++] = {st.st_dev, st.st_ino, me};
    return;
  }
  g_created[g_next_created] = {st.st_dev, st.st_ino, me};
  g_next_created = (g_next_created + 1) % kCap;
}

// Creates `dir` and each missing folder above it, 0700 each, as `mkdir -p` (issue 22.10:
// one level only was made, so CUDASHIM_OUT=runs/today lost every output). EEXIST at any
// level is fine; a failure shows when the file is created. Async-signal-safe (a fixed
// buffer): the flight record may be a process's first output.
void make_folders(const char* dir) {
  char p[sizeof g_dir];
  size_t n = 0;
  for (; dir[n] != '\0' && n < sizeof p - 1; ++n) p[n] = dir[n];
  p[n] = '\0';
  for (size_t i = 1; i <= n; ++i) {
    if (p[i] != '/' && p[i] != '\0') continue;
    const char c = p[i];
    p[i] = '\0';
    mkdir(p, 0700);
    p[i] = c;
  }
}

void make_folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) make_folders(path.substr(0, slash).c_str());
}

// rename(2) that never replaces: renameat2 RENAME_NOREPLACE, or link(2) + unlink(2) where
// the file system lacks it (both fail with EEXIST when something is at `to`).
int rename_noreplace(const char* from, const char* to) {
  constexpr unsigned kNoReplace = 1;  // RENAME_NOREPLACE, <linux/fs.h>
  if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, kNoReplace) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return -errno;
  if (link(from, to) != 0) return -errno;
  unlink(from);
  return 0;
}

}  // namespace

void outputs_configure(const char* dir, const char* host, int pid, int rank) {
  Buf d{g_dir, sizeof g_dir};
  d.s(dir && *dir ? dir : ".");
  Buf b{g_plain, sizeof g_plain};
  b.s(g_dir);
  b.s("/cudashim-");
  const size_t host_at = b.n;
  b.s(host && *host ? host : "host");
  for (size_t i = host_at; i < b.n; ++i)
    if (g_plain[i] == '/' || g_plain[i] == ' ') g_plain[i] = '_';
  b.s("-");
  b.u(static_cast<uint64_t>(pid));
  if (rank >= 0) {
    b.s("-r");
    b.u(static_cast<uint64_t>(rank));
  }
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  g_start_ms = static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
  set_candidate(0);
  g_claim.store(0);
}

const char* outputs_claim() {
  if (g_plain[0] == '\0') return g_base;
  int expected = 0;
  if (g_claim.compare_exchange_strong(expected, 1)) {
    make_folders(g_dir);  // CUDASHIM_OUT may not exist yet
    for (int k = 0; k < 100; ++k) {
      set_candidate(k);
      if (base_free(g_base)) break;
    }
    g_claim.store(2, std::memory_order_release);
  } else {
    // Another thread is claiming (a signal handler's thread or the exit path): at most 100 lstat rounds.
    for (int i = 0; i < 2000 && g_claim.load(std::memory_order_acquire) == 1; ++i) {
      const timespec ms{0, 1000000};
      nanosleep(&ms, nullptr);
    }
  }
  return g_base;
}

int outputs_create(const char* suffix, int flags) {
  if (g_plain[0] == '\0') return -EINVAL;
  char path[sizeof g_base + 16];
  Buf b{path, sizeof path};
  b.s(outputs_claim());
  b.s(suffix);
  const int fd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
  return fd >= 0 ? fd : -errno;
}

uint64_t file_room(uint64_t pos) {
  struct rlimit lim {};
  if (getrlimit(RLIMIT_FSIZE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return pos < lim.rlim_cur ? lim.rlim_cur - pos : 0;
}

int write_file_atomically(const std::string& path, const std::string& text) {
  // A new file starts at 0: a text over the limit is refused whole, before the limit's
  // SIGXFSZ could end the job in the middle of a write (issue 37.2).
  if (text.size() > file_room(0)) return -EFBIG;
  make_folder_of(path);
  std::string tmp;
  int fd = -1;
  for (int n = 0; n < 16 && fd < 0; ++n) {
    tmp = fmt::format("{}.tmp.{}.{}", path, getpid(), n);
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return -errno;
  }
  if (fd < 0) return -EEXIST;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      close(fd);
      unlink(tmp.c_str());
      return -err;
    }
    done += static_cast<size_t>(n);
  }
  struct stat mine {};
  if (fstat(fd, &mine) != 0 || close(fd) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return -err;
  }
  pthread_mutex_lock(&g_created_mu);
  int rc = rename_noreplace(tmp.c_str(), path.c_str());
  if (rc == -EEXIST) {
    // Only a regular file this process put there itself (an earlier cudashim_write_report)
    // is replaced. Between lstat and rename only someone who may rename entries in this
    // folder could swap it, and they could replace the entry themselves anyway.
    struct stat there {};
    if (lstat(path.c_str(), &there) == 0 && S_ISREG(there.st_mode) && created_here(there))
      rc = rename(tmp.c_str(), path.c_str()) == 0 ? 0 : -errno;
  }
  if (rc == 0) remember(path, mine);
  pthread_mutex_unlock(&g_created_mu);
  if (rc != 0) unlink(tmp.c_str());
  return rc;
}

}  // namespace cudashim::recorder
