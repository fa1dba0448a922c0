// report_writer.cpp: report file names and atomic writes.
#include "shim/report_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fmt/format.h>

namespace cudashim::shim {

std::string default_report_path(const std::string& out_dir, const recorder::ProcessInfo& info) {
  std::string host = info.host.empty() ? "host" : info.host;
  for (char& c : host)
    if (c == '/' || c == ' ') c = '_';
  std::string name = info.rank >= 0 ? fmt::format("cudashim-{}-{}-r{}.json", host, info.pid, info.rank)
                                    : fmt::format("cudashim-{}-{}.json", host, info.pid);
  return out_dir.empty() ? name : out_dir + "/" + name;
}

int write_file_atomically(const std::string& path, const std::string& text) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    const std::string dir = path.substr(0, slash);
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return -errno;
  }
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -errno;
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
  if (close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return -err;
  }
  return 0;
}

}  // namespace cudashim::shim
