// exit_hooks.cpp: _exit(2), _Exit(3), the exec(3) family and kill(2) of the process
// itself, the ends that run no destructor.
//
// exec replaces the image: the old one's report is written first, on the calling thread as
// exit() does; when the exec fails the process goes on, and its real end writes the report
// again (over its own file; the stream has had its exit line).
// os._exit, and so every multiprocessing fork child (it always leaves through os._exit),
// and C programs that skip atexit on purpose, end here without reaching the library's
// destructor. The wrappers ask for the outputs first (shim/terminate.h: written by the
// flush thread, waited for at most 2 s, nothing when the process made no CUDA call), then
// end the process through the C library's own function. _exit is async-signal-safe and
// is called from signal handlers, so the writing is never done on the calling thread.
// kill(getpid(), SIGINT) under SIG_DFL is how CPython ends after an uncaught
// KeyboardInterrupt (Ctrl-C), once its own finalization is done: the outputs are written
// first, the same way (shim/terminate.h), then the signal is sent.
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>

#include "recorder/no_cuda_record.h"
#include "shim/real_dl.h"
#include "shim/terminate.h"

namespace cudashim::shim {
namespace {

using ExitFn = void (*)(int);

[[noreturn]] void end_process(const char* name, int status) {
  termination_before_image_ends();
  recorder::no_cuda_note_end();  // a process that made no CUDA call: its one line under `cudashim run`
  if (auto real = reinterpret_cast<ExitFn>(real_dl().dlsym(RTLD_NEXT, name))) real(status);
  for (;;) syscall(SYS_exit_group, status);  // no C library function found: what _exit does
}

template <typename Fn>
Fn real_fn(const char* name) {
  return reinterpret_cast<Fn>(real_dl().dlsym(RTLD_NEXT, name));
}

// The outputs of the image about to be replaced; `rc` is what the exec returned (it
// returns only on failure): the outputs will be written again at the real end.
int after_failed_exec(int rc) {
  const int saved = errno;
  termination_after_failed_exec();
  errno = saved;
  return rc;
}

using KillFn = int (*)(pid_t, int);
using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvFn = int (*)(const char*, char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);

// execl, execlp, execle: the argument list as an array on the caller's stack, sized by a
// first pass over the list, as the C library's own execl does (a variable-length array).
// Not a static or thread_local buffer: 4096 pointers per function in TLS made every thread
// of every preloaded process carry 96 KiB of static TLS, and pthread_create refused small
// stacks (EINVAL; issue 37.1). More arguments than the kernel takes (ARG_MAX) is E2BIG.
constexpr size_t kMaxArgs = 1u << 17;  // 128 Ki pointers: above any ARG_MAX the kernel allows for argv

// Calls `exec(argv)` with the list that starts at `arg0` and continues in `ap` up to its null
// as a null-terminated array; `ap` is left past that null (execle's envp follows it).
// Returns what `exec` returns, or -1 with E2BIG for more than kMaxArgs arguments.
template <typename Exec>
int exec_with_list(const char* arg0, va_list& ap, Exec&& exec) {
  va_list count;
  va_copy(count, ap);
  size_t n = 0;
  for (const char* a = arg0; a != nullptr && n <= kMaxArgs; a = va_arg(count, const char*)) ++n;
  va_end(count);
  if (n > kMaxArgs) return errno = E2BIG, -1;
  char* argv[n + 1];  // a variable-length array, as glibc's execl: no heap (exec may follow vfork)
  argv[0] = const_cast<char*>(arg0);
  for (size_t i = 1; i <= n; ++i) argv[i] = va_arg(ap, char*);  // argv[n]: the list's null
  return exec(argv);
}

}  // namespace
}  // namespace cudashim::shim

using namespace cudashim::shim;

extern "C" __attribute__((visibility("default"))) int execve(const char* path, char* const argv[], char* const envp[]) {
  termination_before_exec();
  return after_failed_exec(real_fn<ExecveFn>("execve")(path, argv, envp));
}

extern "C" __attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  termination_before_exec();
  return after_failed_exec(real_fn<ExecvFn>("execv")(path, argv));
}

extern "C" __attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  termination_before_exec();
  return after_failed_exec(real_fn<ExecvFn>("execvp")(file, argv));
}

extern "C" __attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                              char* const envp[]) {
  termination_before_exec();
  return after_failed_exec(real_fn<ExecveFn>("execvpe")(file, argv, envp));
}

extern "C" __attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[]) {
  termination_before_exec();
  return after_failed_exec(real_fn<FexecveFn>("fexecve")(fd, argv, envp));
}

extern "C" __attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  const int rc = exec_with_list(arg, ap, [&](char** argv) { return execv(path, argv); });
  va_end(ap);
  return rc;
}

extern "C" __attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  const int rc = exec_with_list(arg, ap, [&](char** argv) { return execvp(file, argv); });
  va_end(ap);
  return rc;
}

extern "C" __attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  const int rc = exec_with_list(arg, ap, [&](char** argv) { return execve(path, argv, va_arg(ap, char* const*)); });
  va_end(ap);
  return rc;
}

extern "C" __attribute__((visibility("default"))) int kill(pid_t pid, int sig) {
  static std::atomic<KillFn> real{nullptr};
  KillFn fn = real.load(std::memory_order_acquire);
  if (fn == nullptr) real.store(fn = real_fn<KillFn>("kill"), std::memory_order_release);
  if (fn == nullptr) return static_cast<int>(syscall(SYS_kill, pid, sig));
  if (pid == getpid()) termination_before_self_signal(sig);
  return fn(pid, sig);
}

extern "C" __attribute__((visibility("default"), noreturn)) void _exit(int status) { end_process("_exit", status); }

extern "C" __attribute__((visibility("default"), noreturn)) void _Exit(int status) { end_process("_Exit", status); }
