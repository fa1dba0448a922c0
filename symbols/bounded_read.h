// bounded_read.h: the one way cudashim opens a file it reads: policy files, the kernel module's
// version file, /proc and /sys files, ld.so.cache, ELF files. The environment or a policy may
// name any path, and the shim runs in every preloaded process: a FIFO blocks open(2) and read(2)
// until a writer comes (every process hung at load), /dev/zero never ends (read until
// bad_alloc), a terminal opened without O_NOCTTY can become the controlling one, and a device's
// open may itself do something. So a path is stat(2)ed first and opened only when it is a
// regular file, with O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_NOCTTY; what was opened is checked again with
// fstat(2) (the path may have been replaced in between); and no more than a limit is read.
// Header-only: recorder/ reads /proc through it too, and links nothing of symbols/.
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "symbols/result.h"

namespace cudashim::symbols {

// The flags of every open for reading (open(2)): never block on a FIFO's open, never leak into
// an exec'd child, never acquire a controlling terminal.
inline constexpr int kReadOpenFlags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;

// What a file of mode `m` is, for a message: "a FIFO", "a directory", ...
inline const char* file_kind(mode_t m) {
  if (S_ISREG(m)) return "a regular file";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a file";
}

// The outcome of open_regular(): `fd` >= 0 when opened. Otherwise `err` is the errno of the
// failed stat or open (ENOENT: no such file), or 0 when the file exists but is not regular
// (`mode` says what it is).
struct OpenedFile {
  int fd = -1;
  int err = 0;
  mode_t mode = 0;
  std::uint64_t size = 0;  // st_size; 0 for /proc and /sys files, whatever they hold
};

// Opens `path` for reading when it is a regular file, without ever blocking. Allocates
// nothing (the constructor of the preload library calls it). The caller closes `fd`.
inline OpenedFile open_regular(const char* path) noexcept {
  OpenedFile f;
  struct stat st {};
  if (stat(path, &st) != 0) return f.err = errno, f;
  if (!S_ISREG(st.st_mode)) return f.mode = st.st_mode, f;  // never opened: a FIFO or a device
  const int fd = open(path, kReadOpenFlags);
  if (fd < 0) return f.err = errno, f;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced between stat and open
    f.err = S_ISREG(st.st_mode) ? errno : 0;
    f.mode = st.st_mode;
    close(fd);
    return f;
  }
  f.fd = fd;
  f.mode = st.st_mode;
  f.size = static_cast<std::uint64_t>(st.st_size);
  return f;
}

// Why open_regular() gave no descriptor, for "<path>: <why>": "cannot be opened: No such file or
// directory", "not a regular file (a FIFO)".
inline std::string open_problem(const OpenedFile& f) {
  if (f.err != 0) return std::string("cannot be opened: ") + std::strerror(f.err);
  return std::string("not a regular file (") + file_kind(f.mode) + ")";
}

// A limit as a message writes it: "64 KiB", "1 MiB", "100 bytes".
inline std::string size_text(std::size_t n) {
  if (n >= (1u << 20) && n % (1u << 20) == 0) return std::to_string(n >> 20) + " MiB";
  if (n >= 1024 && n % 1024 == 0) return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + " bytes";
}

// Reads up to `n` - 1 bytes of regular file `path` into `buf`, NUL-terminated, allocating
// nothing. Returns the bytes read: 0 for a file that is missing, not regular or empty.
inline std::size_t read_regular_into(const char* path, char* buf, std::size_t n) noexcept {
  if (n == 0) return 0;
  buf[0] = '\0';
  const OpenedFile f = open_regular(path);
  if (f.fd < 0) return 0;
  std::size_t got = 0;
  while (got + 1 < n) {
    const ssize_t r = read(f.fd, buf + got, n - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  close(f.fd);
  buf[got] = '\0';
  return got;
}

// The whole of regular file `path`, at most `limit` bytes. An error "<path>: <what>" when it
// is missing or unreadable, not a regular file, or holds more than `limit` bytes ("larger than
// 64 KiB, the limit for this file"); a file the kernel sizes as 0 (/proc, /sys) is measured by
// reading it, against the same limit. With `truncated` non-null a larger file is no error: its
// first `limit` bytes come back and *truncated is set. `err`, when non-null, gets the errno of
// a failed open or read (ENOENT for a missing file), 0 otherwise.
inline Result<std::string> read_regular(const std::string& path, std::size_t limit, bool* truncated = nullptr,
                                        int* err = nullptr) {
  if (truncated) *truncated = false;
  if (err) *err = 0;
  const OpenedFile f = open_regular(path.c_str());
  if (f.fd < 0) {
    if (err) *err = f.err;
    return make_error(path, open_problem(f));
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{f.fd};
  if (f.size > limit && truncated == nullptr)
    return make_error(path, "larger than " + size_text(limit) + ", the limit for this file");
  const std::size_t cap = limit + 1;  // one byte more than the limit tells a larger file
  std::string text;
  text.resize(f.size > 0 && f.size < cap ? static_cast<std::size_t>(f.size) + 1 : std::min<std::size_t>(4096, cap));
  std::size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (text.size() >= cap) break;
      text.resize(std::min(cap, text.size() * 2));
    }
    const ssize_t r = read(f.fd, text.data() + got, text.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      if (err) *err = errno;
      return make_error(path, std::string("cannot be read: ") + std::strerror(errno));
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  if (got > limit) {
    if (truncated == nullptr) return make_error(path, "larger than " + size_text(limit) + ", the limit for this file");
    *truncated = true;
    got = limit;
  }
  text.resize(got);
  return text;
}

}  // namespace cudashim::symbols
