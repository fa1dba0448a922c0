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

// Sets where and under which name the record goes; installs the signal handlers
// (once; a later call only updates the name, e.g. in a forked child).
void flight_configure(const char* out_dir, const char* host, int pid, int rank);

// Sets the function the handler calls for SIGABRT (abort(), an uncaught C++ exception)
// once the record is on disk and before the signal is handed on: shim/terminate.cpp asks
// the flush thread for the full report there and waits a bounded time. `fn` must be
// async-signal-safe. Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL) never call it: the heap
// the report needs may be what is broken.
void flight_set_abort_hook(void (*fn)());

// Writes the record now for a CUDA error (not in a signal handler). Once per process.
void flight_write_cuda_error(const char* api, uint64_t result);

}  // namespace cudashim::recorder
