// event_stream.cpp: NDJSON file, flush thread, memory samples.
#include "recorder/event_stream.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>
#include <cstring>
#include <mutex>

#include "recorder/backtrace.h"
#include "recorder/clock.h"
#include "recorder/flight_recorder.h"
#include "recorder/json_writer.h"
#include "recorder/ledger.h"
#include "recorder/output_files.h"
#include "recorder/own_cost.h"
#include "recorder/own_thread.h"
#include "recorder/library_json.h"
#include "recorder/recorder.h"
#include "recorder/thread_slots.h"
#include "symbols/walk_objects.h"

namespace cudashim::recorder {
namespace {

char g_path[4096];
// The stream's descriptor, and the file it was opened on: the program may close the
// number and reuse it (daemons close every inherited descriptor), so each write first
// checks the file behind the number (fstat identity, not the number) and reopens the
// stream by its path when it changed: never a write into the program's file.
std::atomic<int> g_fd{-1};
dev_t g_dev = 0;
ino_t g_ino = 0;
char g_open_path[4096];  // g_path made absolute when opened: the program may chdir
pthread_mutex_t g_fd_mu = PTHREAD_MUTEX_INITIALIZER;  // the check, the reopen and the write
std::atomic<void (*)(const char*)> g_warn{nullptr};
bool g_warned = false;
bool g_limited = false;  // the file-size limit stopped the stream (fits_limit)

void warn(const std::string& line) {
  if (auto w = g_warn.load(std::memory_order_acquire)) w(line.c_str());
}

// True when `fd` is still the regular file the stream created.
bool is_stream_file(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == g_dev && st.st_ino == g_ino;
}

// The stream's descriptor, reopened for append by its path when the number no longer
// holds the stream's file; -1 (from then on) when the file is gone or is another file.
// The old number is the program's now: it is never closed. Holds g_fd_mu.
int checked_fd() {
  const int fd = g_fd.load(std::memory_order_acquire);
  if (fd < 0 || is_stream_file(fd)) return fd;
  const int again = open(g_open_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  const bool ours = again >= 0 && is_stream_file(again);
  if (again >= 0 && !ours) close(again);
  g_fd.store(ours ? again : -1, std::memory_order_release);
  if (!ours || !g_warned)
    warn(ours ? fmt::format("the event stream's descriptor {} was closed or reused by the program; reopened {}", fd,
                            g_open_path)
              : fmt::format("the event stream's descriptor {} was closed or reused by the program and {} is not the "
                            "file it created; no more event-stream lines",
                            fd, g_open_path));
  g_warned = true;
  return ours ? again : -1;
}
std::atomic<int> g_state{0};  // 0 not started, 1 starting/started, 2 finished
uint64_t g_t0 = 0;
constexpr size_t kMaxSamples = 3600 * 4;
MemorySample g_samples[kMaxSamples];
std::atomic<size_t> g_nsamples{0};

// True when `line` fits in the stream's file under the file-size limit (ulimit -f). Past
// it a write raises SIGXFSZ, which ends the job (issue 37.2): the stream stops at its last
// whole line instead, with one warning. Holds g_fd_mu.
bool fits_limit(int fd, const std::string& line) {
  if (g_limited) return false;
  struct stat st {};
  if (fstat(fd, &st) != 0 || file_room(static_cast<uint64_t>(st.st_size)) >= line.size()) return true;
  g_limited = true;
  warn(fmt::format("the event stream {} stops at {} bytes: the process's file-size limit (ulimit -f) is reached; "
                   "the report and the trace are still written if each fits under it",
                   g_open_path, static_cast<uint64_t>(st.st_size)));
  return false;
}

// Whether the exit line is written: nothing follows it. A tick of the flush thread that was
// running when the exit path wrote it (a library rescan, a snapshot) had appended its lines
// after the exit line (preload.job_limits.fsize, 3 runs of 6). Holds g_fd_mu.
bool g_ended = false;

void write_line(const std::string& line, bool last = false) {
  if (g_fd.load(std::memory_order_acquire) < 0) return;
  pthread_mutex_lock(&g_fd_mu);
  const int fd = g_ended ? -1 : checked_fd();
  if (fd >= 0 && fits_limit(fd, line))
    (void)!write(fd, line.data(), line.size());  // one write: lines never interleave (O_APPEND)
  if (last) g_ended = true;
  pthread_mutex_unlock(&g_fd_mu);
}

// Writes one line {"t_ns": t_ns, "type": type, <members written by body>}.
template <typename Body>
void emit(uint64_t t_ns, const char* type, Body&& body) {
  std::string line;
  {
    JsonWriter w(line);
    auto o = w.object();
    w.member("t_ns", t_ns);
    w.member("type", type);
    body(w);
  }
  line += '\n';
  write_line(line, std::strcmp(type, "exit") == 0);
}

// An event line at the time of the call, when the stream is open.
template <typename Body>
void emit_event(const char* type, Body&& body) {
  if (g_fd.load(std::memory_order_acquire) < 0) return;
  emit(monotonic_ns() - g_t0, type, std::forward<Body>(body));
}

void snapshot(const char* type) {
  // Per call, not static: the flush thread and the exit path may snapshot at once.
  auto totals = std::make_unique<CounterTotals>();
  CounterTotals& t = *totals;
  sum_slots(t);
  uint64_t calls = 0, errors = 0;
  for (size_t h = 0; h < kHookCount; ++h) calls += t.calls[h], errors += t.errors[h];
  const uint64_t now = monotonic_ns() - g_t0;
  DeviceStats d[kMaxDevices + 1];
  const int n = ledger_devices(d, kMaxDevices + 1);
  emit(now, type, [&](JsonWriter& w) {
    w.member("calls", calls);
    w.member("errors", errors);
    w.member("blocked_ns", ticks_to_ns(t.blocked_outer_ns));
    w.key("devices");
    auto a = w.array();
    for (int i = 0; i < n; ++i) {
      if (d[i].device == kHostDevice) continue;
      auto row = w.object();
      w.member("device", d[i].device);
      w.member("live_bytes", d[i].live_bytes);
      w.member("peak_bytes", d[i].peak_bytes);
      const size_t k = g_nsamples.load(std::memory_order_relaxed);
      if (k < kMaxSamples) {
        g_samples[k] = {now, d[i].device, d[i].live_bytes};
        g_nsamples.store(k + 1, std::memory_order_release);
      }
    }
  });
}

// The tick functions, each with its name in the report's self_cost.parts: g_ticks[0] is
// stream_set_tick's, the others stream_add_tick's in order.
constexpr int kTicks = 7;
std::atomic<void (*)()> g_ticks[kTicks];
std::atomic<const char*> g_tick_names[kTicks];
// The flush thread's parts past the ticks (recorder/own_cost.h, own_part_add).
constexpr uint64_t kSleepNs = 1000000000ull;  // a round: its ticks, then this sleep
constexpr uint64_t kTenthNs = 100000000ull;
constexpr int kPartSnapshot = kTicks, kPartWake = kTicks + 1, kPartStart = kTicks + 2;
static_assert(kPartStart < kOwnParts);

// The flush thread's wake-up: a futex word, not a pipe, so that there is no descriptor the
// program could close and reuse (a reused read end once looked like a wake-up and the
// report was written early). stream_wake() bumps it; the owner process is kept because a
// forked child inherits the word but not the thread.
std::atomic<uint32_t> g_wake_seq{0};
uint32_t g_wake_seen = 0;  // the flush thread's own
std::atomic<pid_t> g_wake_pid{0};
std::atomic<void (*)()> g_on_start{nullptr}, g_on_wake{nullptr};

long futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, timeout, nullptr, 0);
}

// Sleeps `ns`, or less when woken; returns true when woken.
bool sleep_for(uint64_t ns) {
  uint32_t now = g_wake_seq.load(std::memory_order_acquire);
  if (now == g_wake_seen) {
    const timespec t{static_cast<time_t>(ns / 1000000000ull), static_cast<long>(ns % 1000000000ull)};
    futex(&g_wake_seq, FUTEX_WAIT_PRIVATE, now, &t);
    now = g_wake_seq.load(std::memory_order_acquire);
  }
  if (now == g_wake_seen) return false;
  g_wake_seen = now;
  return true;
}

// Set when the main thread leaves through pthread_exit(3) (its thread-specific data is
// destroyed then, never on exit()): from then on the process ends with its last thread.
std::atomic<bool> g_main_left{false};
pthread_key_t g_main_key;
// It wakes the flush thread, which from then on looks every 100 ms for the end of the last thread.
void on_main_left(void*) {
  g_main_left.store(true, std::memory_order_release);
  stream_wake();
}

// Marks the calling thread, when it is the main thread, so that its pthread_exit is seen.
void watch_main_thread() {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  static bool have_key = false;
  pthread_once(&once, [] { have_key = pthread_key_create(&g_main_key, on_main_left) == 0; });
  g_main_left.store(false);
  if (have_key && syscall(SYS_gettid) == getpid()) pthread_setspecific(g_main_key, &g_main_key);
}

// True when no thread but the calling one is alive: the main thread is a zombie (it left
// through pthread_exit and stays in the thread group until the process ends) and the group
// holds only it and us. proc(5): /proc/self/stat fields 3 (state) and 20 (num_threads).
bool last_thread_alive() {
  const int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the command name may hold spaces and parentheses
  if (p == nullptr || p[1] != ' ') return false;
  const char state = p[2];
  int field = 3;
  for (p += 2; *p != '\0' && field < 20; ++p)
    if (*p == ' ') ++field;
  return state == 'Z' && field == 20 && std::atoi(p) <= 2;
}

// The flush thread is no program thread: glibc ends the process when its last thread
// leaves (exit(0) in that thread), and our thread would keep it alive forever, every
// signal blocked (issue 22: main's pthread_exit after a CUDA call never ended). When only
// we are left, end it as glibc would have: exit(0), which runs atexit and the report.
void exit_if_last_thread() {
  if (g_main_left.load(std::memory_order_acquire) && last_thread_alive()) exit(0);
}

// Runs part `part`, charging the flush thread's CPU time since `before` to it; returns the
// clock after it (the next part's `before`).
template <typename Fn>
uint64_t run_part(int part, const char* name, uint64_t before, Fn&& fn) {
  const uint64_t wall = monotonic_ns();
  fn();
  const uint64_t after = own_thread_cpu_ns();
  own_part_add(part, name, after - before, monotonic_ns() - wall);
  return after;
}

void* flush_loop(void*) {
  // Named here, before any tick, not only by the creator after pthread_create returns: the
  // first tick may already run (and a test double tells our thread from the program's by name).
  pthread_setname_np(pthread_self(), "cudashim-flush");
  uint64_t cpu = own_thread_cpu_ns();
  if (auto start = g_on_start.load(std::memory_order_acquire)) cpu = run_part(kPartStart, "start", cpu, start);
  while (g_state.load(std::memory_order_acquire) == 1) {
    // One round: every tick, the snapshot, then about a second of sleep (own_round_add).
    const uint64_t round_cpu = cpu, round_wall = monotonic_ns();
    for (int i = 0; i < kTicks; ++i)
      if (auto tick = g_ticks[i].load(std::memory_order_acquire))
        cpu = run_part(i, g_tick_names[i].load(std::memory_order_relaxed), cpu, tick);
    if (g_state.load(std::memory_order_acquire) == 1) cpu = run_part(kPartSnapshot, "snapshot", cpu, [] { snapshot("snapshot"); });
    // The rest of the second in one sleep (a wake-up, a signal's, ends it early), in slices of
    // 100 ms only once the main thread has left (exit_if_last_thread): ten timed wake-ups a
    // second cost the thread more CPU than all its ticks on a quiet job (self_cost.parts).
    cpu = run_part(kPartWake, "sleep_and_wake", cpu, [] {
      const uint64_t end = monotonic_ns() + kSleepNs;
      for (uint64_t now = monotonic_ns(); now < end && g_state.load(std::memory_order_acquire) == 1; now = monotonic_ns()) {
        const uint64_t left = end - now;
        if (sleep_for(g_main_left.load(std::memory_order_acquire) ? std::min(left, kTenthNs) : left))
          if (auto wake = g_on_wake.load(std::memory_order_acquire)) wake();
        exit_if_last_thread();
      }
    });
    own_round_add(cpu - round_cpu, monotonic_ns() - round_wall, cpu);
  }
  return nullptr;
}

}  // namespace

void stream_set_tick(void (*fn)(), const char* name) {
  g_tick_names[0].store(name, std::memory_order_relaxed);
  g_ticks[0].store(fn, std::memory_order_release);
}

bool stream_add_tick(void (*fn)(), const char* name) {
  // Set at start-up by one thread (shim/init.cpp's constructor), before the flush thread runs.
  for (int i = 1; i < kTicks; ++i) {
    void (*const was)() = g_ticks[i].load(std::memory_order_acquire);
    if (was == fn) return true;
    if (was != nullptr) continue;
    g_tick_names[i].store(name, std::memory_order_relaxed);  // before the function: the thread reads it after
    g_ticks[i].store(fn, std::memory_order_release);
    return true;
  }
  return false;
}

void stream_set_wake_handlers(void (*on_start)(), void (*on_wake)()) {
  g_on_start.store(on_start, std::memory_order_release);
  g_on_wake.store(on_wake, std::memory_order_release);
}

void stream_set_warn(void (*fn)(const char* line)) { g_warn.store(fn, std::memory_order_release); }

bool stream_wake() {
  if (g_state.load(std::memory_order_acquire) != 1 || g_wake_pid.load() != getpid()) return false;
  const int saved = errno;
  g_wake_seq.fetch_add(1, std::memory_order_release);
  futex(&g_wake_seq, FUTEX_WAKE_PRIVATE, 1, nullptr);
  errno = saved;
  return true;
}

void stream_configure(const char* dir, const char* host, int pid, int rank) {
  outputs_configure(dir, host, pid, rank);  // every output's base name: recorder/output_files.h
  // A forked child starts its own stream: the parent's thread did not survive fork. The
  // inherited descriptor is closed only while it still holds the parent's stream file, and
  // the lock is new (fork may have copied it held).
  g_fd_mu = PTHREAD_MUTEX_INITIALIZER;
  g_ended = false;
  const int fd = g_fd.exchange(-1);
  if (fd >= 0 && g_state.load() == 1 && is_stream_file(fd)) close(fd);
  g_wake_pid.store(0);
  g_wake_seen = g_wake_seq.load();
  g_warned = false;
  g_limited = false;
  g_state.store(0);
  g_nsamples.store(0);
  g_t0 = monotonic_ns();
  watch_main_thread();
}

void stream_ensure_started() {
  int expected = 0;
  if (!g_state.compare_exchange_strong(expected, 1)) return;
  // The crash handlers wait for the first CUDA call too, and are installed here on the
  // calling thread, before it goes on into the driver (recorder/flight_recorder.h).
  flight_install_handlers();
  // The process's first output: it claims the base name (a new one when host and pid repeat).
  const int fd = outputs_create(".ndjson", O_WRONLY | O_APPEND);
  if (fd < 0) return;  // the report says why at exit; the job goes on
  std::snprintf(g_path, sizeof g_path, "%s.ndjson", outputs_claim());
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    close(fd);
    return;
  }
  g_dev = st.st_dev;
  g_ino = st.st_ino;
  g_open_path[0] = '\0';
  if (g_path[0] != '/' && getcwd(g_open_path, sizeof g_open_path - 2) != nullptr)
    std::strncat(g_open_path, "/", sizeof g_open_path - 1 - std::strlen(g_open_path));
  std::strncat(g_open_path, g_path, sizeof g_open_path - 1 - std::strlen(g_open_path));
  g_fd.store(fd, std::memory_order_release);
  emit(0, "start", [](JsonWriter& w) {
    w.member("schema", "cudashim.events/1");
    w.member("pid", getpid());
    // CLOCK_REALTIME at t_ns 0: lines up the t_ns of streams of several processes and hosts.
    timespec r;
    clock_gettime(CLOCK_REALTIME, &r);
    const uint64_t since_t0 = monotonic_ns() - g_t0;
    w.member("t0_unix_ns", static_cast<uint64_t>(r.tv_sec) * 1000000000ull + static_cast<uint64_t>(r.tv_nsec) - since_t0);
  });
  // The first CUDA use: the flight record's unwinder does its one-time set-up here, never
  // in a crash handler (recorder/backtrace.h).
  {
    symbols::LoaderCall gate;  // its unwinder walks the loaded objects (symbols/walk_objects.h)
    backtrace_prepare();
  }
  // The flush thread takes no signal: they belong to the application's threads. Its stack of
  // 1 MiB: it also re-reads the library inventory.
  if (start_own_thread(flush_loop, "cudashim-flush", 1024 * 1024)) g_wake_pid.store(getpid());
}

void stream_event(const FindingEvent& e) {
  emit_event("finding", [&](JsonWriter& w) {
    w.member("id", e.id);
    w.member("api", e.api);
    w.member("hits", e.hits);
  });
}

void stream_event(const GpuHealthEvent& e) {
  const GpuHealthSample& s = e.sample;
  emit(s.t_ns > g_t0 ? s.t_ns - g_t0 : 0, "gpu_health", [&](JsonWriter& w) {
    w.member("device", s.device);
    auto field = [&](uint32_t bit, const char* name, uint64_t v) {
      w.key(name);
      if (s.have & bit) w.value(v); else w.null();
    };
    field(GpuHealthSample::kClocks, "sm_mhz", s.sm_mhz);
    field(GpuHealthSample::kClocks, "mem_mhz", s.mem_mhz);
    field(GpuHealthSample::kReasons, "clock_event_reasons", s.clock_event_reasons);
    field(GpuHealthSample::kTemp, "temp_c", s.temp_c);
    field(GpuHealthSample::kPower, "power_mw", s.power_mw);
    field(GpuHealthSample::kPower, "power_limit_mw", s.power_limit_mw);
    field(GpuHealthSample::kMemory, "mem_used_bytes", s.mem_used_bytes);
    field(GpuHealthSample::kUtil, "util_gpu_pct", s.util_gpu_pct);
    field(GpuHealthSample::kUtil, "util_mem_pct", s.util_mem_pct);
  });
}

void stream_event(const GpuErrorEvent& e) {
  emit(e.event.t_ns > g_t0 ? e.event.t_ns - g_t0 : 0, "gpu_event", [&](JsonWriter& w) {
    w.member("device", e.event.device);
    w.member("kind", (e.event.type & 0x8) ? "xid" : "double_bit_ecc");  // nvmlEventTypeXidCriticalError = 0x8
    w.member("data", e.event.data);
  });
}

void stream_event(const LibraryLoadEvent& e) {
  emit_event("library_load", [&](JsonWriter& w) {
    w.key("library");
    write_library(w, e.library);
  });
}

void stream_event(const LibraryUnloadEvent& e) {
  emit_event("library_unload", [&](JsonWriter& w) { w.member("path", e.path); });
}

void stream_event(const LibraryFindingEvent& e) {
  emit_event("library_finding", [&](JsonWriter& w) {
    w.key("finding");
    write_library_finding(w, e.finding);
  });
}

void stream_event(const SignalEvent& e) {
  emit_event("signal", [&](JsonWriter& w) {
    w.member("signal", e.signal);
    w.member("name", e.name);
  });
}

void stream_finish() {
  int expected = 1;
  if (!g_state.compare_exchange_strong(expected, 2)) return;
  snapshot("exit");
}

std::vector<MemorySample> stream_memory_samples() {
  const size_t n = g_nsamples.load(std::memory_order_acquire);
  return std::vector<MemorySample>(g_samples, g_samples + n);
}

}  // namespace cudashim::recorder
