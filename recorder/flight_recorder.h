// flight_recorder.h: the record a crash leaves behind.
//
// In a process that made a CUDA call (recorder::has_activity()), on SIGSEGV, SIGBUS,
// SIGFPE, SIGILL and SIGABRT, and at the first sticky CUDA
// error (700 illegal address, 719 launch failure, ...), one new file <base>-crash.json
// (recorder/output_files.h; created O_EXCL, 0600; schema "cudashim.crash/1"):
// the last calls of every thread (their rings), the memory ledger per device and
// what happened. Written with async-signal-safe calls only (open, write, close,
// no allocation, no locks); then the signal goes to the handler that was there
// before (Python's faulthandler, the default action), so the process ends as it
// would have.
#pragma once
#include <cstdint>

namespace cudashim::recorder {

// Sets where and under which name the record goes (start-up; a forked child). Installs
// nothing: see flight_install_handlers.
void flight_configure(const char* out_dir, const char* host, int pid, int rank);

// Installs the handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT, once per process
// image and only after flight_configure: at the process's first CUDA call
// (recorder/event_stream.cpp), never at load time. Python reads every signal's action as
// it starts and signal.getsignal() answers None for one that is not SIG_DFL or SIG_IGN
// then, so `signal.signal(s, signal.signal(s, h))` raised TypeError in every preloaded
// Python process (issue 22.6). The handler replaced is chained to as the kernel would have
// run it (its SA_SIGINFO, sa_mask, SA_NODEFER, SA_RESETHAND); ours runs on the alternate
// stack when the thread has one (a stack overflow's SIGSEGV needs it).
void flight_install_handlers();

// Sets the function the handler calls for SIGABRT (abort(), an uncaught C++ exception)
// once the record is on disk and before the signal is handed on: shim/terminate.cpp asks
// the flush thread for the full report there and waits a bounded time. `fn` must be
// async-signal-safe. Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL) never call it: the heap
// the report needs may be what is broken.
void flight_set_abort_hook(void (*fn)());

// Writes the record now for a CUDA error (not in a signal handler). Once per process.
void flight_write_cuda_error(const char* api, uint64_t result);

}  // namespace cudashim::recorder
