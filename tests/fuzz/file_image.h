// file_image.h: hands a fuzz input to an API that reads a file by path.
//
// The policy loader and the ELF readers take a path (toml++ and libelf read the
// file themselves), so the bytes go into one memfd that lives as long as the
// fuzzer, rewritten for each input and named /proc/self/fd/<n>: no file is
// created on disk and nothing is left behind.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace cudashim::fuzz {

class FileImage {
 public:
  explicit FileImage(const char* name) {
    fd_ = memfd_create(name, MFD_CLOEXEC);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  // Replaces the file's contents with `data`; returns its path.
  const std::string& write(const std::uint8_t* data, std::size_t size) {
    if (ftruncate(fd_, 0) != 0 || (size > 0 && pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size))) {
      std::perror("memfd write");
      std::abort();
    }
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// Stops the fuzzer with the message when a contract of the code under test is broken
// (libFuzzer saves the input that did it as a crash artifact).
[[noreturn]] inline void contract_broken(const std::string& what) {
  std::fprintf(stderr, "contract broken: %s\n", what.c_str());
  std::abort();
}

}  // namespace cudashim::fuzz
