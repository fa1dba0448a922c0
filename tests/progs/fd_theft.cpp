// fd_theft: a daemon-style program that, after its first CUDA call, closes every descriptor
// it did not open itself (`for fd in 3..1023: close(fd)`) and then reuses the numbers: first
// its own data file, then a pipe to itself. Whatever descriptors the shim held now carry the
// program's files. The program writes 16 bytes into its pipe, makes 100 allocations over
// about 2 s (the shim's thread ticks meanwhile) and reads the 16 bytes back.
// Prints one JSON line for tests/preload/descriptors.py: {"pipe_read": N, "fds": [...],
// "inheritable": M} (M: descriptors >= 3 without FD_CLOEXEC before the close loop).
//   fd_theft DATA_FILE
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "driver_api.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  Resolver res(Path::procaddr);
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(res.get("cuMemAlloc", "cuMemAlloc_v2"));
  auto mfree = reinterpret_cast<PFN_cuMemFree_v3020>(res.get("cuMemFree", "cuMemFree_v2"));
  CUdeviceptr p = 0;
  CHECK_CU(alloc(&p, 4096));  // the first CUDA call: the shim's stream and thread start
  CHECK_CU(mfree(p));
  usleep(300000);
  int inheritable = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    const int self = dirfd(d);
    while (dirent* e = readdir(d)) {
      const int fd = std::atoi(e->d_name);
      if (fd >= 3 && fd != self && !(fcntl(fd, F_GETFD) & FD_CLOEXEC)) ++inheritable;
    }
    closedir(d);
  }
  for (int fd = 3; fd < 1024; ++fd) close(fd);
  const int data = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int pipefd[2];
  if (data < 0 || pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0) return 3;
  const char msg[] = "0123456789abcdef";
  if (write(pipefd[1], msg, 16) != 16) return 4;
  const char own[] = "the program's own data\n";
  if (write(data, own, sizeof own - 1) != sizeof own - 1) return 5;
  for (int i = 0; i < 100; ++i) {
    CHECK_CU(alloc(&p, 4096));
    CHECK_CU(mfree(p));
    usleep(20000);
  }
  char back[32] = {};
  const ssize_t n = read(pipefd[0], back, sizeof back);
  std::printf("{\"pipe_read\": %zd, \"fds\": [%d, %d, %d], \"inheritable\": %d}\n", n, data, pipefd[0], pipefd[1],
              inheritable);
  return 0;
}
