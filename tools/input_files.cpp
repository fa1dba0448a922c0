// input_files.cpp: see input_files.h.
#include "tools/input_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

#include "recorder/utf8.h"

namespace fs = std::filesystem;

namespace cudashim::tools {
namespace {

constexpr size_t kChunk = 64 * 1024;

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  return "not a regular file";
}

// Why a file or folder cannot be read, and what to do where there is something to do.
std::string cannot_read(int err, const char* what) {
  if (err == ELOOP) return fmt::format("a loop of symbolic links ({})", std::strerror(err));
  if (err == EACCES || err == EPERM)
    return fmt::format("cannot be read ({}): the shim writes its files 0600 in folders 0700, so run `cudashim "
                       "report` as the user who ran the job, or have them share {}",
                       std::strerror(err), what);
  return fmt::format("cannot be read ({})", std::strerror(err));
}

bool is_report_name(const std::string& name) {
  if (name.rfind("cudashim-", 0) != 0) return false;
  const auto ends = [&](std::string_view tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends(".json") || ends(".ndjson");
}

}  // namespace

std::string shown(std::string_view path) { return utf8_text(path, /*controls=*/true); }

std::optional<InputFile> InputFile::open(const std::string& path, std::string& why) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    why = errno == ENOENT ? "no such file (a link to nothing?)" : cannot_read(errno, "it");
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {  // refused before open(): opening a FIFO waits for a writer
    why = fmt::format("{}, not a regular file", kind_of(st.st_mode));
    return std::nullopt;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    why = cannot_read(errno, "it");
    return std::nullopt;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced between the stat and the open
    why = fmt::format("{}, not a regular file", kind_of(st.st_mode));
    ::close(fd);
    return std::nullopt;
  }
  return InputFile(fd, static_cast<uint64_t>(st.st_size));
}

InputFile::InputFile(InputFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), offset_(other.offset_), buf_(std::move(other.buf_)),
      head_(other.head_), read_(other.read_) {}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> InputFile::read_all(uint64_t limit, std::string& why) {
  std::string out;
  char chunk[kChunk];
  for (;;) {
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = cannot_read(errno, "it");
      return std::nullopt;
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > limit) {
      why = fmt::format("larger than the {} MiB a report can be (the shim writes tens of KiB)", limit >> 20);
      return std::nullopt;
    }
    out.append(chunk, static_cast<size_t>(n));
  }
  offset_ += out.size();
  return out;
}

long InputFile::fill(uint64_t n) {
  const uint64_t want = std::min<uint64_t>(n, size_ - std::min(size_, read_));
  if (want == 0) return 0;
  if (head_ > 0 && head_ >= buf_.size() / 2) {  // drop what was consumed, now and then
    buf_.erase(0, head_);
    head_ = 0;
  }
  const size_t at = buf_.size();
  buf_.resize(at + want);
  ssize_t got;
  do got = ::read(fd_, buf_.data() + at, want);
  while (got < 0 && errno == EINTR);
  buf_.resize(at + (got > 0 ? static_cast<size_t>(got) : 0));
  if (got < 0) {
    error_ = cannot_read(errno, "it");
    return -1;
  }
  read_ += static_cast<uint64_t>(got);
  return got;
}

InputFile::Line InputFile::next_line(std::string& line, uint64_t limit) {
  size_t scan = head_;
  for (;;) {
    const size_t nl = buf_.find('\n', scan);
    if (nl != std::string::npos) {
      if (nl - head_ > limit) return Line::too_long;
      line.assign(buf_, head_, nl - head_);
      offset_ += nl - head_ + 1;
      head_ = nl + 1;
      return Line::complete;
    }
    if (buf_.size() - head_ > limit) return Line::too_long;
    scan = buf_.size();
    const size_t scanned = scan - head_;  // fill() may move the buffer's head
    const long n = fill(kChunk);
    scan = head_ + scanned;
    if (n < 0) {
      line = error_;
      return Line::error;
    }
    if (n == 0) {
      if (head_ == buf_.size()) return Line::end;
      line.assign(buf_, head_, std::string::npos);
      offset_ += line.size();
      head_ = buf_.size();
      return Line::incomplete;
    }
  }
}

std::vector<std::string> run_folder_files(const std::string& dir, std::vector<std::string>& problems) {
  std::vector<std::string> files;
  std::vector<fs::path> pending{fs::path(dir)};
  std::set<std::pair<dev_t, ino_t>> walked;
  while (!pending.empty()) {
    const fs::path d = std::move(pending.back());
    pending.pop_back();
    struct stat st;
    if (::stat(d.c_str(), &st) == 0 && !walked.insert({st.st_dev, st.st_ino}).second) continue;  // seen: a loop
    std::error_code ec;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code lec;
      const fs::file_status s = it->symlink_status(lec);  // lstat: a link to a folder is no folder here
      if (!lec && fs::is_directory(s))
        pending.push_back(it->path());
      else if (is_report_name(it->path().filename().string()))
        files.push_back(it->path().string());
    }
    if (ec)
      problems.push_back(fmt::format("{}: {}; the reports in it are left out", shown(d.string()),
                                     cannot_read(ec.value(), "the folder")));
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace cudashim::tools
