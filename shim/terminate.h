// terminate.h: the report when the process ends other than by a normal exit.
//
// Normal exit and exit() from any thread reach the library's destructor, which writes
// the report, the trace and the stream's last line. Two ends skip destructors:
//   SIGTERM, SIGINT and SIGHUP with their default action (systemd, Kubernetes, Slurm,
//     `kill`, Ctrl-C, a closed terminal): the shim installs a handler, only where the
//     action is still the default when the process makes its first CUDA call; a handler
//     the program installs later and that chains to ours finds it doing nothing;
//   SIGABRT (an uncaught C++ exception: std::terminate -> abort): the flight recorder's
//     handler writes the crash record first, then calls in here.
// The handler (async-signal-safe) wakes the event stream's flush thread, which writes the
// outputs with the destructor's own code; the handler waits for it with a deadline (2 s
// for SIGTERM, 1 s for SIGABRT: an abort may come from a thread holding a lock the
// writer needs), then lets the signal end the process exactly as it would have
// (SIGTERM: default action re-raised, the parent sees 128+15).
#pragma once

namespace cudashim::shim {

// Registers `write` (the report, the trace, the stream's last line; safe to call when
// there is nothing to write) for every end. `on_signals`: also arm the SIGTERM and
// SIGABRT paths (false when reports are off or the shim is inert). Call once, from the
// constructor.
void termination_configure(void (*write)(), bool on_signals);

// Runs `write` unless another end already did it; when another end is writing, waits for
// it (at most 2 s). The destructor's path.
void termination_write_once();

// In a forked child: nothing written yet for this process.
void termination_after_fork();
// The signal whose end is writing the outputs (SIGTERM, SIGABRT, ...), 0 for a normal exit or _exit.
int termination_signal();

// Async-signal-safe, for a process about to send itself SIGTERM, SIGINT or SIGHUP under its
// default action (kill(getpid(), sig): shim/exit_hooks.cpp). CPython leaves that way after
// an uncaught KeyboardInterrupt, past Py_FinalizeEx and without the C exit path: it sets
// SIGINT to SIG_DFL and kills itself. Writes the outputs (with the stream's signal line)
// as the SIGTERM handler does; nothing for another signal or action, or with no flush thread.
void termination_before_self_signal(int sig);

// Async-signal-safe, for the ends that skip the destructor (_exit, _Exit:
// shim/exit_hooks.cpp): asks the flush thread for the outputs and waits for them (at most
// 2 s). Returns at once when the process has no flush thread (no CUDA call) or in a vfork
// child (its memory is its parent's: the parent's outputs are not its to write).
void termination_before_image_ends();

// Before an exec (shim/exit_hooks.cpp): the outputs, written now on the calling thread (as
// exit() does), unless another end is writing them. Nothing in a vfork child.
void termination_before_exec();

// After an exec that failed (the image goes on): its real end writes the outputs again.
void termination_after_failed_exec();

}  // namespace cudashim::shim
