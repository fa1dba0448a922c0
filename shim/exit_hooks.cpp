// exit_hooks.cpp: _exit(2) and _Exit(3), the ends that run no destructor.
//
// os._exit, and so every multiprocessing fork child (it always leaves through os._exit),
// and C programs that skip atexit on purpose, end here without reaching the library's
// destructor. The wrappers ask for the outputs first (shim/terminate.h: written by the
// flush thread, waited for at most 2 s, nothing when the process made no CUDA call), then
// end the process through the C library's own function. _exit is async-signal-safe and
// is called from signal handlers, so the writing is never done on the calling thread.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

#include "shim/real_dl.h"
#include "shim/terminate.h"

namespace cudashim::shim {
namespace {

using ExitFn = void (*)(int);

[[noreturn]] void end_process(const char* name, int status) {
  termination_before_image_ends();
  if (auto real = reinterpret_cast<ExitFn>(real_dl().dlsym(RTLD_NEXT, name))) real(status);
  for (;;) syscall(SYS_exit_group, status);  // no C library function found: what _exit does
}

}  // namespace
}  // namespace cudashim::shim

extern "C" __attribute__((visibility("default"), noreturn)) void _exit(int status) {
  cudashim::shim::end_process("_exit", status);
}

extern "C" __attribute__((visibility("default"), noreturn)) void _Exit(int status) {
  cudashim::shim::end_process("_Exit", status);
}
