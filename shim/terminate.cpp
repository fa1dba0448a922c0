// terminate.cpp: the SIGTERM, SIGINT, SIGHUP and SIGABRT paths to a complete report (see terminate.h).
#include "shim/terminate.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cerrno>
#include <string>

#include "recorder/event_stream.h"
#include "recorder/flight_recorder.h"
#include "shim/log.h"

namespace cudashim::shim {
namespace {

constexpr int kTermDeadlineMs = 2000;   // SIGTERM: what systemd/Kubernetes grace periods easily allow
constexpr int kAbortDeadlineMs = 1000;  // SIGABRT: the aborting thread may hold a lock the writer needs

std::atomic<void (*)()> g_write{nullptr};
std::atomic<int> g_phase{0};   // 0 nothing written, 1 being written, 2 written
std::atomic<int> g_signal{0};  // the first signal that asked for the outputs (kNoSignal: _exit)
constexpr int kNoSignal = -1;
std::atomic<pid_t> g_owner{0};  // the process these outputs belong to (not a vfork child)
std::atomic<bool> g_armed{false};  // the flush thread writes on request (reports on, not inert)
thread_local bool t_writing = false;  // initial-exec TLS: readable in a signal handler

// The signals whose default action ends the process without a destructor and that a job
// is commonly stopped with (kill, systemd, Kubernetes, Slurm, Ctrl-C, a closed terminal).
constexpr int kEndSignals[] = {SIGTERM, SIGINT, SIGHUP};

bool is_end_signal(int sig) {
  for (const int s : kEndSignals)
    if (s == sig) return true;
  return false;
}

const char* signal_text(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGABRT: return "SIGABRT";
    default: return "signal";
  }
}

// Waits until the outputs are written or `deadline_ms` passed. Async-signal-safe.
void wait_written(int deadline_ms) {
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    if (g_phase.load(std::memory_order_acquire) == 2) return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const long waited_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (waited_ms >= deadline_ms) return;
    const timespec ms{0, 1000000};
    nanosleep(&ms, nullptr);
  }
}

// Whichever end gets here first writes; the others wait for it (at most 2 s) unless they
// are that writer (a signal handler on the writing thread). The writing thread holds the
// end signals blocked while it writes: one that lands then waits in the kernel and ends the
// process once the outputs are whole (issue 22.7: a SIGTERM on the thread running the
// destructor re-raised at once and cut the report or left the trace's temporary file).
void write_once_for(int sig) {
  void (*write)() = g_write.load(std::memory_order_acquire);
  if (write == nullptr) return;
  sigset_t ends, old;
  sigemptyset(&ends);
  for (const int s : kEndSignals) sigaddset(&ends, s);
  pthread_sigmask(SIG_BLOCK, &ends, &old);
  int expected = 0;
  if (g_phase.compare_exchange_strong(expected, 1)) {
    t_writing = true;
    if (sig > 0) {
      try {
        recorder::stream_event(recorder::SignalEvent{sig, signal_text(sig)});
      } catch (...) {
      }
    }
    write();
    t_writing = false;
    g_phase.store(2, std::memory_order_release);
  } else if (expected == 1 && !t_writing) {
    wait_written(kTermDeadlineMs);  // exit() or an exec must not end the image under the writer
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// The flush thread, woken by a handler below. A wake-up with no signal behind it writes
// nothing: only a signal's request ends the outputs early.
void on_wake() {
  if (const int sig = g_signal.load(); sig != 0) write_once_for(sig);
}

void stream_warning(const char* line) { log_message(LogLevel::warn, "{}", line); }

// Async-signal-safe: asks the flush thread for the outputs and waits until they are
// written, no writer is at work, or `deadline_ms` passed.
void request_outputs(int sig, int deadline_ms) {
  const int saved = errno;
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  const bool woken = recorder::stream_wake();
  // A writer at work: the flush thread just woken, or exit() on another thread (this
  // thread being that writer would wait for itself).
  if (!t_writing && (woken || g_phase.load() == 1)) wait_written(deadline_ms);
  errno = saved;
}

void on_end_signal(int sig, siginfo_t*, void*);

// True when `sig`'s action is this file's handler.
bool handler_is_ours(int sig) {
  struct sigaction cur {};
  return sigaction(sig, nullptr, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) != 0 && cur.sa_sigaction == on_end_signal;
}

void on_end_signal(int sig, siginfo_t*, void*) {
  // Called by the program's own handler, which replaced ours and chains to what it
  // replaced: to it ours stands for SIG_DFL, and a chaining handler never runs a default
  // action. Do nothing: the program decides how it ends, and its exit writes the report
  // (issue 22.7: re-raising here killed a program that leaves with 0 on its own).
  if (!handler_is_ours(sig)) return;
  const int saved = errno;
  request_outputs(sig, kTermDeadlineMs);
  // End as the default action would have. The signal stays blocked in this thread until
  // the handler returns, so the re-raised one is delivered then, under SIG_DFL.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);
  errno = saved;
}

void on_abort() { request_outputs(SIGABRT, kAbortDeadlineMs); }

// On the flush thread as it starts (the first CUDA call): take SIGTERM, SIGINT and SIGHUP
// only where the action is still the default. Not at load time: Python records each
// signal's action when it starts, so signal.getsignal() keeps answering SIG_DFL (a handler
// installed before would read as None, which code that saves and restores handlers cannot
// restore). Python's own SIGINT handler (KeyboardInterrupt) is there by then and stays.
void arm_end_signals() {
  for (const int sig : kEndSignals) {
    struct sigaction cur {};
    if (sigaction(sig, nullptr, &cur) != 0) continue;
    if ((cur.sa_flags & SA_SIGINFO) != 0 || cur.sa_handler != SIG_DFL) continue;  // the job's own, SIG_IGN, or ours (fork)
    struct sigaction sa {};
    sa.sa_sigaction = on_end_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

void termination_configure(void (*write)(), bool on_signals) {
  g_write.store(write, std::memory_order_release);
  g_owner.store(getpid());
  recorder::stream_set_warn(stream_warning);
  if (!on_signals) return;
  g_armed.store(true);
  // quick_exit(3) runs its handlers, then glibc's own _exit (an internal call that no
  // interposed _exit sees): ours, registered first, runs last of them.
  at_quick_exit(termination_before_image_ends);
  recorder::stream_set_wake_handlers(arm_end_signals, on_wake);
  recorder::flight_set_abort_hook(on_abort);
}

void termination_write_once() { write_once_for(0); }

void termination_after_fork() {
  g_phase.store(0);
  g_signal.store(0);
  g_owner.store(getpid());
}

void termination_before_exec() {
  if (getpid() == g_owner.load()) write_once_for(0);
}

void termination_after_failed_exec() {
  if (getpid() != g_owner.load()) return;  // a vfork child: the phase is its parent's
  int written = 2;
  if (g_phase.compare_exchange_strong(written, 0)) g_signal.store(0);
}

void termination_before_self_signal(int sig) {
  if (!is_end_signal(sig) || !g_armed.load() || getpid() != g_owner.load()) return;
  struct sigaction cur {};
  if (sigaction(sig, nullptr, &cur) != 0 || (cur.sa_flags & SA_SIGINFO) != 0 || cur.sa_handler != SIG_DFL) return;
  request_outputs(sig, kTermDeadlineMs);
}

void termination_before_image_ends() {
  if (!g_armed.load() || getpid() != g_owner.load()) return;
  request_outputs(kNoSignal, kTermDeadlineMs);
}

int termination_signal() {
  const int sig = g_signal.load();
  return sig > 0 ? sig : 0;
}

}  // namespace cudashim::shim
