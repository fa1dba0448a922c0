// job_limits: legal things jobs do that a preloaded library must not change (issue 37).
// tests/preload/job_limits.py runs each mode with and without the shim and compares.
//   stacks            creates a thread with a 16, 32 and 64 KiB stack (pthread_attr_setstacksize),
//                     before any CUDA call and after one; prints "stack K: ok" or the error
//                     (the shim's static TLS once took 96 KiB of every thread's stack: EINVAL)
//   calls N           N hooked calls (alloc, launch, sync, free rounds of four), then exit 0:
//                     the harness runs it under a file-size limit (ulimit -f)
//   fork_exit K       the parent makes 100 calls, then forks K children; child i makes 10 + i
//                     calls and ends with _exit(i); the parent waits and prints each status
//   close_stdio DIR   one round, then closes every descriptor (stdio included) and opens
//                     DIR/data0, DIR/data1, DIR/data2 (numbers 0, 1, 2), writes its own line
//                     into each, makes 100 more rounds and returns 0
//   report_paths DIR  10 rounds, cudashim_write_report(NULL) (the exit report's own path),
//                     then cudashim_write_report to DIR/r0.json ... DIR/r99.json, 10 rounds
//                     more, and returns: the exit report must count all 80 calls
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "driver_api.h"

namespace {

void* nothing(void*) { return nullptr; }

// Starts and joins a thread with a `kib` KiB stack; prints the outcome.
bool small_stack_thread(int kib, const char* when) {
  pthread_attr_t a;
  pthread_attr_init(&a);
  int rc = pthread_attr_setstacksize(&a, static_cast<size_t>(kib) * 1024);
  pthread_t t;
  if (rc == 0) rc = pthread_create(&t, &a, nothing, nullptr);
  if (rc == 0) pthread_join(t, nullptr);
  pthread_attr_destroy(&a);
  std::printf("stack %d KiB %s: %s\n", kib, when, rc == 0 ? "ok" : std::strerror(rc));
  return rc == 0;
}

int stacks() {
  bool ok = true;
  for (const int kib : {16, 32, 64}) ok &= small_stack_thread(kib, "before CUDA");
  one_round(resolve_round_calls());
  for (const int kib : {16, 32, 64}) ok &= small_stack_thread(kib, "after CUDA");
  return ok ? 0 : 1;
}

int calls(long n) {
  const RoundCalls c = resolve_round_calls();
  for (long i = 0; i < n / 4; ++i) one_round(c);
  std::printf("made %ld calls\n", n / 4 * 4);
  return 0;
}

int fork_exit(int kids) {
  const RoundCalls c = resolve_round_calls();
  for (int i = 0; i < 25; ++i) one_round(c);
  pid_t pids[64];
  for (int k = 0; k < kids && k < 64; ++k) {
    pids[k] = fork();
    if (pids[k] == 0) {
      const RoundCalls cc = resolve_round_calls();
      for (int i = 0; i < 10 + k; ++i) cc.launch(reinterpret_cast<CUfunction>(0x1), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
      _exit(k);
    }
  }
  for (int k = 0; k < kids && k < 64; ++k) {
    int st = 0;
    waitpid(pids[k], &st, 0);
    std::printf("%d:%d%s", static_cast<int>(pids[k]), WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st),
                k + 1 < kids ? "," : "\n");
  }
  return 0;
}

int close_stdio(const char* dir) {
  const RoundCalls c = resolve_round_calls();
  one_round(c);
  for (int fd = 0; fd < 1024; ++fd) close(fd);
  for (int i = 0; i < 3; ++i) {
    const std::string path = std::string(dir) + "/data" + std::to_string(i);
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    // The numbers a daemon gets: 0, 1, 2. The shim's flush thread may reopen its stream in
    // between and take a low number (by design: recorder/event_stream.cpp); the job's file
    // is put on its number all the same.
    if (fd >= 0 && fd != i) {
      if (dup2(fd, i) != i) _exit(10 + i);
      close(fd);
      fd = i;
    }
    if (fd != i) _exit(10 + i);
    const std::string line = "job data " + std::to_string(i) + "\n";
    (void)!write(fd, line.data(), line.size());
  }
  for (int i = 0; i < 100; ++i) one_round(c);
  return 0;
}

int report_paths(const char* dir) {
  using WriteReport = int (*)(const char*);
  const auto write_report = reinterpret_cast<WriteReport>(dlsym(RTLD_DEFAULT, "cudashim_write_report"));
  const RoundCalls c = resolve_round_calls();
  for (int i = 0; i < 10; ++i) one_round(c);
  if (write_report == nullptr) {  // without the shim: the same calls, nothing to write
    for (int i = 0; i < 10; ++i) one_round(c);
    return 0;
  }
  int failed = write_report(nullptr) != 0;
  for (int i = 0; i < 100; ++i) failed += write_report((std::string(dir) + "/r" + std::to_string(i) + ".json").c_str()) != 0;
  for (int i = 0; i < 10; ++i) one_round(c);
  std::printf("explicit reports failed: %d\n", failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const char* arg = argc > 2 ? argv[2] : "";
  if (!std::strcmp(mode, "stacks")) return stacks();
  if (!std::strcmp(mode, "calls")) return calls(std::atol(arg));
  if (!std::strcmp(mode, "fork_exit")) return fork_exit(std::atoi(arg));
  if (!std::strcmp(mode, "close_stdio")) return close_stdio(arg);
  if (!std::strcmp(mode, "report_paths")) return report_paths(arg);
  std::fprintf(stderr, "usage: job_limits stacks|calls N|fork_exit K|close_stdio DIR|report_paths DIR\n");
  return 2;
}
