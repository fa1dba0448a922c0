// flight_recorder.cpp: async-signal-safe crash records.
//
// The record is JSON (docs/crash-schema.md) but not written with recorder/json_writer.h:
// it is rendered inside a SIGSEGV/SIGABRT handler, where allocating (the writer appends to
// a std::string) can deadlock on the malloc lock the faulting thread holds (signal-safety(7)).
// It fills a fixed static buffer instead, and names only fixed identifiers (hook and
// signal names, the crash reason), so it needs no string escaper.
#include "recorder/flight_recorder.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "recorder/backtrace.h"
#include "recorder/clock.h"
#include "recorder/gpu_samples.h"
#include "recorder/ledger.h"
#include "recorder/output_files.h"
#include "recorder/recorder.h"
#include "recorder/thread_slots.h"

namespace cudashim::recorder {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous[sizeof kSignals / sizeof kSignals[0]];
std::atomic<bool> g_configured{false};
std::atomic<bool> g_installed{false}, g_written{false};
std::atomic<int> g_in_handler{0};
// The thread that entered the handler first, and whether it finished the record: a
// second thread that faults meanwhile must not end the process under it.
std::atomic<long> g_writer_tid{0};
std::atomic<bool> g_record_done{false};
std::atomic<void (*)()> g_abort_hook{nullptr};

// A fixed buffer and append helpers that never allocate (signal context).
struct Out {
  char buf[1 << 16];
  size_t n = 0;
  void s(const char* t) {
    for (; *t && n < sizeof buf - 1; ++t) buf[n++] = *t;
  }
  void u(uint64_t v) {
    char tmp[24];
    int i = 0;
    do tmp[i++] = static_cast<char>('0' + v % 10); while ((v /= 10) && i < 24);
    while (i > 0 && n < sizeof buf - 1) buf[n++] = tmp[--i];
  }
  void hex(uint64_t v) {
    s("\"0x");
    char tmp[17];
    int i = 0;
    do tmp[i++] = "0123456789abcdef"[v & 15]; while ((v >>= 4) && i < 16);
    while (i > 0 && n < sizeof buf - 1) buf[n++] = tmp[--i];
    s("\"");
  }
};
Out g_out;  // static: a signal handler's stack may be small

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return "signal";
  }
}

// The record's "threads": each thread's call count and its last calls. Async-signal-safe.
void write_threads(Out& o) {
  o.s(",\n \"threads\": [");
  ThreadSlot* slots = slot_table();
  const uint32_t used = slots_in_use();
  bool first = true;
  for (uint32_t t = 0; t < used; ++t) {
    const ThreadSlot& sl = slots[t];
    const uint64_t total = sl.ring_next.load(std::memory_order_acquire);
    if (total == 0) continue;
    o.s(first ? "\n  " : ",\n  ");
    first = false;
    o.s("{\"tid\": ");
    o.u(sl.tid.load(std::memory_order_relaxed));
    o.s(", \"calls\": ");
    o.u(total);
    o.s(", \"last_calls\": [");
    const uint64_t from = total > kRingSize ? total - kRingSize : 0;
    for (uint64_t i = from; i < total; ++i) {
      const RingEntry& e = sl.ring[i % kRingSize];
      if (i != from) o.s(", ");
      o.s("{\"api\": \"");
      o.s(e.hook < kHookCount ? kHooks[e.hook].name : "?");
      o.s("\", \"result\": ");
      o.u(e.result);
      o.s(", \"ns\": ");
      o.u(ticks_to_ns(e.duration));
      o.s("}");
    }
    o.s("]}");
  }
  o.s("]");
}

// The record's "memory": live and peak bytes per device. Async-signal-safe.
void write_memory(Out& o) {
  o.s(",\n \"memory\": {\"devices\": [");
  DeviceStats d[8];
  const int nd = ledger_devices(d, 8);
  bool firstd = true;
  for (int i = 0; i < nd; ++i) {
    if (d[i].device == kHostDevice) continue;
    o.s(firstd ? "" : ", ");
    firstd = false;
    o.s("{\"device\": ");
    o.u(static_cast<uint64_t>(d[i].device));
    o.s(", \"live_bytes\": ");
    o.u(d[i].live_bytes);
    o.s(", \"peak_bytes\": ");
    o.u(d[i].peak_bytes);
    o.s("}");
  }
  o.s("]}");
}

// Renders and writes the record. Async-signal-safe.
void write_record(const char* reason, int sig, uint64_t fault_address, const char* api, uint64_t result) {
  if (!g_configured.load()) return;
  Out& o = g_out;
  o.n = 0;
  o.s("{\"schema\": \"cudashim.crash/1\", \"reason\": \"");
  o.s(reason);
  o.s("\", \"pid\": ");
  o.u(static_cast<uint64_t>(getpid()));
  if (sig != 0) {
    o.s(", \"signal\": ");
    o.u(static_cast<uint64_t>(sig));
    o.s(", \"signal_name\": \"");
    o.s(signal_name(sig));
    o.s("\", \"fault_address\": ");
    o.hex(fault_address);
  } else {
    o.s(", \"api\": \"");
    o.s(api);
    o.s("\", \"result\": ");
    o.u(result);
  }
  write_threads(o);
  write_memory(o);
  // The writing thread's own stack: in a handler, the faulting thread's (recorder/backtrace.h).
  if (o.n < sizeof o.buf - 4) o.n += backtrace_json(o.buf + o.n, sizeof o.buf - 4 - o.n);
  gpu_flight_json(o.buf, o.n, sizeof o.buf);  // the last health sample and the Xid events (recorder/gpu_samples.h)
  o.s("}\n");
  // A new file under the process's claimed base (O_EXCL, O_NOFOLLOW, 0600): never over an
  // earlier process's record, whatever its mode (issue 22: O_TRUNC kept a planted 0666 file).
  // Under a file-size limit the record is cut short rather than the write raising SIGXFSZ
  // inside the crash handler (issue 37.2); a cut record is named as such by `cudashim report`.
  const uint64_t room = file_room(0);
  const size_t n = o.n < room ? o.n : static_cast<size_t>(room);
  if (n == 0) return;
  const int fd = outputs_create("-crash.json", O_WRONLY);
  if (fd < 0) return;
  size_t done = 0;
  while (done < n) {
    const ssize_t w = write(fd, o.buf + done, n - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  close(fd);
}

// Hands `sig` to `prev`, the action ours replaced, as the kernel would have run it: that
// action becomes the signal's again (SIG_DFL instead under SA_RESETHAND); a handler runs
// with its sa_mask blocked and, unless SA_NODEFER, the signal too (Python's faulthandler
// sets SA_NODEFER and re-raises inside its handler: it must end the process there, as
// without us). A default or ignored action: a fault re-executes the instruction under it
// once we return; a signal someone sent (kill, raise, abort) is raised again.
void hand_over(int sig, const struct sigaction& prev, siginfo_t* info, void* ctx) {
  struct sigaction next = prev;
  if ((prev.sa_flags & SA_RESETHAND) != 0) next.sa_handler = SIG_DFL;  // the kernel resets the handler alone
  sigaction(sig, &next, nullptr);
  const bool with_info = (prev.sa_flags & SA_SIGINFO) != 0 && prev.sa_sigaction != nullptr;
  const bool plain = (prev.sa_flags & SA_SIGINFO) == 0 && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN &&
                     prev.sa_handler != nullptr;
  if (with_info || plain) {
    sigset_t mine, theirs;
    pthread_sigmask(SIG_SETMASK, nullptr, &mine);  // the mask at delivery, plus `sig` (ours has no SA_NODEFER)
    theirs = mine;
    for (int s = 1; s < NSIG; ++s)
      if (sigismember(&prev.sa_mask, s) == 1) sigaddset(&theirs, s);
    if ((prev.sa_flags & SA_NODEFER) != 0) sigdelset(&theirs, sig);
    pthread_sigmask(SIG_SETMASK, &theirs, nullptr);
    if (with_info) prev.sa_sigaction(sig, info, ctx);
    else prev.sa_handler(sig);
    pthread_sigmask(SIG_SETMASK, &mine, nullptr);
    return;
  }
  if (info == nullptr || info->si_code <= 0 || sig == SIGABRT) raise(sig);
}

void on_signal(int sig, siginfo_t* info, void* ctx) {
  int idx = 0;
  for (int i = 0; i < static_cast<int>(sizeof kSignals / sizeof kSignals[0]); ++i)
    if (kSignals[i] == sig) idx = i;
  // Entered twice (a fault inside the writer, or two threads): write nothing more. Another
  // thread waits (at most 2 s) for the first one's record before its own fault ends the
  // process: 4 threads faulting at once left an empty record (preload.crash.flight_record).
  const long me = syscall(SYS_gettid);
  const bool first = g_in_handler.fetch_add(1) == 0;
  // Every preloaded process has this handler, CUDA or not: a process that never made a
  // CUDA call (Python's faulthandler, os.abort(), a runtime handling its own faults) gets
  // no record, only the hand-over below (issue 22). Atomic loads only: async-signal-safe.
  const bool cuda = has_activity();
  if (first) {
    g_writer_tid.store(me);
    if (cuda && !g_written.exchange(true))
      write_record("signal", sig, info ? reinterpret_cast<uint64_t>(info->si_addr) : 0, "", 0);
    g_record_done.store(true, std::memory_order_release);
  } else if (g_writer_tid.load() != me) {
    for (int i = 0; i < 200 && !g_record_done.load(std::memory_order_acquire); ++i) {
      const timespec tick{0, 10 * 1000 * 1000};
      nanosleep(&tick, nullptr);
    }
  }
  // abort(): the record is safe on disk; the full report may follow within a deadline.
  if (first && cuda && sig == SIGABRT)
    if (auto hook = g_abort_hook.load(std::memory_order_acquire)) hook();
  hand_over(sig, g_previous[idx], info, ctx);
}

}  // namespace

void flight_configure(const char* dir, const char* host, int pid, int rank) {
  // <base>-crash.json, the base of recorder/output_files.h (set for these same values by
  // stream_configure; set here too, so that the order of the two calls does not matter).
  outputs_configure(dir, host, pid, rank);
  g_configured.store(true);
  g_written.store(false);
  g_in_handler.store(0);
  g_writer_tid.store(0);
  g_record_done.store(false);
}

void flight_install_handlers() {
  if (!g_configured.load() || g_installed.exchange(true)) return;
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    struct sigaction sa {};
    sa.sa_sigaction = on_signal;
    // SA_ONSTACK: a thread with an alternate stack (sigaltstack) takes a stack overflow's
    // SIGSEGV there; without it the handler could not run at all and the kernel kills the
    // process where the program's own SA_ONSTACK handler would have run.
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(kSignals[i], &sa, &g_previous[i]);
  }
}

void flight_set_abort_hook(void (*fn)()) { g_abort_hook.store(fn, std::memory_order_release); }

void flight_write_cuda_error(const char* api, uint64_t result) {
  if (g_written.exchange(true)) return;
  write_record("cuda_error", 0, 0, api, result);
}

void on_sticky_error(HookId id, uint64_t result) { flight_write_cuda_error(hook_info(id).name, result); }

}  // namespace cudashim::recorder
