// cupti_collector.cpp: see cupti_collector.h.
#include "shim/cupti_collector.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "recorder/clock.h"
#include "recorder/gpu_intervals.h"
#include "shim/cupti_abi.h"
#include "shim/cupti_locate.h"
#include "shim/library_watch.h"
#include "shim/real_dl.h"
#include "shim/thread_flags.h"
#include "symbols/walk_objects.h"

extern char** environ;

namespace cudashim::shim {
namespace {

using recorder::PreciseState;

struct Api {
  cupti::RegisterCallbacksFn register_callbacks;
  cupti::ActivityKindFn enable, disable;
  cupti::FlushAllFn flush_all;
  cupti::GetNextRecordFn next_record;
  cupti::GetTimestampFn timestamp;
};

bool g_asked = false;
pid_t g_pid = 0;           // the process the state below belongs to
std::mutex g_mu;           // start, stand-aside and finish; never taken by a hook or a CUPTI callback
PreciseState g_state;      // under g_mu
void* g_handle = nullptr;  // the libcupti we loaded (or found loaded)
Api g_api{};
bool g_started = false, g_collecting = false, g_finished = false;
int g_enabled_kinds[3];
int g_nenabled = 0;
std::atomic<int64_t> g_offset{0};  // CUPTI's timestamp minus monotonic_ns()

// The buffer pool: CUPTI asks for a buffer on its own thread; a refused request makes it drop
// records (counted as misses), never waits.
constexpr size_t kBufferBytes = 1u << 20;
constexpr int kBuffers = 16;
alignas(8) uint8_t g_pool[kBuffers][kBufferBytes];
std::atomic<uint32_t> g_free{(1u << kBuffers) - 1};
std::atomic<uint64_t> g_completed{0}, g_misses{0};

void on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  uint32_t f = g_free.load(std::memory_order_acquire);
  while (f != 0) {
    const int i = __builtin_ctz(f);
    if (g_free.compare_exchange_weak(f, f & ~(1u << i), std::memory_order_acq_rel)) {
      *buffer = g_pool[i], *size = kBufferBytes, *max_records = 0;
      return;
    }
  }
  g_misses.fetch_add(1, std::memory_order_relaxed);
  *buffer = nullptr, *size = 0, *max_records = 0;
}

template <typename T>
T field(const uint8_t* p, size_t off) {
  T v;
  std::memcpy(&v, p + off, sizeof v);
  return v;
}

uint64_t to_mono(uint64_t t) {
  const int64_t m = static_cast<int64_t>(t) - g_offset.load(std::memory_order_relaxed);
  return m > 0 ? static_cast<uint64_t>(m) : 0;
}

void on_buffer_completed(void*, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  cupti::Activity* r = nullptr;
  if (g_api.next_record != nullptr && valid_size > 0)
    while (g_api.next_record(buffer, valid_size, &r) == cupti::kSuccess) {
      const auto* p = reinterpret_cast<const uint8_t*>(r);
      recorder::GpuInterval g{};
      if (r->kind == cupti::kKindConcurrentKernel || r->kind == cupti::kKindKernel) {
        g.start_ns = field<uint64_t>(p, cupti::kKernelStart), g.end_ns = field<uint64_t>(p, cupti::kKernelEnd);
        g.device = static_cast<int16_t>(field<uint32_t>(p, cupti::kKernelDevice));
        g.context = field<uint32_t>(p, cupti::kKernelContext);
        g.kind = recorder::GpuInterval::kKernel;
      } else if (r->kind == cupti::kKindMemcpy || r->kind == cupti::kKindMemset) {
        g.start_ns = field<uint64_t>(p, cupti::kCopyStart), g.end_ns = field<uint64_t>(p, cupti::kCopyEnd);
        g.device = static_cast<int16_t>(field<uint32_t>(p, cupti::kCopyDevice));
        g.context = field<uint32_t>(p, cupti::kCopyContext);
        g.kind = r->kind == cupti::kKindMemcpy ? recorder::GpuInterval::kCopy : recorder::GpuInterval::kMemset;
      } else {
        continue;
      }
      if (g.end_ns <= g.start_ns) continue;  // an incomplete record (CUPTI leaves end at 0)
      g.start_ns = to_mono(g.start_ns), g.end_ns = to_mono(g.end_ns);
      recorder::precise_record(g);
    }
  const uintptr_t at = reinterpret_cast<uintptr_t>(buffer), base = reinterpret_cast<uintptr_t>(g_pool[0]);
  if (at >= base && at < base + sizeof g_pool) g_free.fetch_or(1u << ((at - base) / kBufferBytes), std::memory_order_acq_rel);
  g_completed.fetch_add(1, std::memory_order_relaxed);
}

void copy_text(char* dst, size_t cap, const std::string& s) { std::snprintf(dst, cap, "%s", s.c_str()); }

void publish_locked() {
  g_state.buffers = g_completed.load(std::memory_order_relaxed);
  g_state.buffer_misses = g_misses.load(std::memory_order_relaxed);
  recorder::precise_set_state(g_state);
}

void set_mode_locked(PreciseState::Mode m, const char* reason) {
  g_state.mode = m;
  g_state.reason = reason;
  publish_locked();
}

// A CUPTI client already at work when the process started: Nsight Systems and other injected
// tools set CUDA_INJECTION64_PATH; Nsight's launchers export NSYS_* / NSIGHT_* variables.
bool client_at_start(std::string& client) {
  if (const char* inj = std::getenv("CUDA_INJECTION64_PATH"); inj != nullptr && *inj != '\0') {
    client = std::string("the CUPTI client injected by CUDA_INJECTION64_PATH=") + inj;
    return true;
  }
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, "NSYS_", 5) == 0 || std::strncmp(*e, "NSIGHT_", 7) == 0) {
      const char* eq = std::strchr(*e, '=');
      client = "Nsight (" + std::string(*e, eq ? static_cast<size_t>(eq - *e) : std::strlen(*e)) + " is set)";
      return true;
    }
  return false;
}

template <typename T>
bool bind(T& fn, const char* name) {
  fn = reinterpret_cast<T>(real_dl().dlsym(g_handle, name));
  return fn != nullptr;
}

// CUPTI's timestamp against the recorder's clock: the reading closest to the middle of the
// narrowest of a few brackets; the error is half that bracket.
void measure_offset_locked() {
  uint64_t best = ~0ull;
  for (int i = 0; i < 8; ++i) {
    uint64_t c = 0;
    const uint64_t a = monotonic_ns();
    if (g_api.timestamp(&c) != cupti::kSuccess) return;
    const uint64_t b = monotonic_ns();
    if (b - a < best) {
      best = b - a;
      g_state.clock_offset_ns = static_cast<int64_t>(c) - static_cast<int64_t>(a + (b - a) / 2);
      g_state.clock_error_ns = (b - a + 1) / 2;
    }
  }
  g_offset.store(g_state.clock_offset_ns, std::memory_order_relaxed);
}

void start_locked() {
  g_started = true;
  g_state.asked = true;
  std::string client;
  if (client_at_start(client)) {
    copy_text(g_state.client, sizeof g_state.client, client);
    g_state.stood_aside_ns = monotonic_ns();
    return set_mode_locked(PreciseState::kStoodAside, "another CUPTI client was active at start");
  }
  const CuptiLocation where = locate_cupti(live_driver_version());
  copy_text(g_state.tried, sizeof g_state.tried, where.tried);
  if (where.path.empty()) {
    copy_text(g_state.detail, sizeof g_state.detail,
              "no libcupti.so." + std::to_string(where.major) +
                  " in the process, next to libcudart, in $CUDA_HOME or /usr/local/cuda (install nvidia-cuda-cupti-cu" +
                  std::to_string(where.major) + " or point CUDA_HOME at a toolkit)");
    return set_mode_locked(PreciseState::kUnavailable, g_state.detail);
  }
  copy_text(g_state.library, sizeof g_state.library, where.path);
  g_state.found_by = where.found_by;
  {
    symbols::LoaderCall gate;  // serialized with fork (symbols/walk_objects.h)
    g_handle = real_dl().dlopen(where.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (g_handle == nullptr) return set_mode_locked(PreciseState::kUnavailable, "libcupti could not be loaded");
  if (!bind(g_api.register_callbacks, "cuptiActivityRegisterCallbacks") || !bind(g_api.enable, "cuptiActivityEnable") ||
      !bind(g_api.disable, "cuptiActivityDisable") || !bind(g_api.flush_all, "cuptiActivityFlushAll") ||
      !bind(g_api.next_record, "cuptiActivityGetNextRecord") || !bind(g_api.timestamp, "cuptiGetTimestamp"))
    return set_mode_locked(PreciseState::kUnavailable, "libcupti lacks an activity entry point (cuptiActivityRegisterCallbacks, "
                                                       "cuptiActivityEnable, cuptiActivityFlushAll, cuptiGetTimestamp, ...)");
  measure_offset_locked();
  if (const cupti::Result rc = g_api.register_callbacks(on_buffer_requested, on_buffer_completed); rc != cupti::kSuccess) {
    std::snprintf(g_state.detail, sizeof g_state.detail, "cuptiActivityRegisterCallbacks returned %d", rc);
    return set_mode_locked(PreciseState::kFailed, g_state.detail);
  }
  for (int kind : {cupti::kKindConcurrentKernel, cupti::kKindMemcpy, cupti::kKindMemset}) {
    const cupti::Result rc = g_api.enable(kind);
    if (rc == cupti::kSuccess) {
      g_enabled_kinds[g_nenabled++] = kind;
      continue;
    }
    for (int i = 0; i < g_nenabled; ++i) g_api.disable(g_enabled_kinds[i]);
    g_nenabled = 0;
    std::snprintf(g_state.detail, sizeof g_state.detail, "cuptiActivityEnable(%d) returned %d", kind, rc);
    return set_mode_locked(PreciseState::kFailed, g_state.detail);
  }
  g_collecting = true;
  // Before libcupti's own exit-time teardown: its static destructors were registered when it
  // loaded, so this handler, registered later, runs first (the library destructor that writes
  // the report runs after both, when flushing could touch a finalized CUPTI).
  std::atexit([] { cupti_finish(); });
  set_mode_locked(PreciseState::kCollecting, "");
}

// Delivers every buffer and turns cudashim's kinds off (a client arrives, or the exit).
void stop_locked() {
  if (!g_collecting) return;
  g_api.flush_all(cupti::kFlushForced);
  for (int i = 0; i < g_nenabled; ++i) g_api.disable(g_enabled_kinds[i]);
  g_nenabled = 0;
  g_collecting = false;
}

// The object that holds `caller`, by file name, and what it most likely is.
std::string client_name(const char* entry, const void* caller) {
  Dl_info info{};
  std::string who = "an unknown caller";
  if (caller != nullptr && dladdr(caller, &info) != 0 && info.dli_fname != nullptr) {
    who = info.dli_fname;
    const size_t slash = who.rfind('/');
    if (slash != std::string::npos) who = who.substr(slash + 1);
  }
  const bool kineto = who.find("torch") != std::string::npos || who.find("kineto") != std::string::npos;
  return std::string(kineto ? "torch.profiler (Kineto) in " : "") + who + " (" + entry + ")";
}

}  // namespace

// A child forked while another thread held g_mu (a tick's flush) would inherit it held and
// hang at its first tick or at exit: the child starts with a fresh one (docs/gpu-time.md).
static void renew_mutex_in_child() { new (&g_mu) std::mutex; }

void cupti_configure(const policy::Settings& s) {
  g_asked = s.gpu_precise;
  static bool handler = false;  // a plain flag, not pthread_once: a forked child keeps it, and needs no second handler
  if (!handler) handler = pthread_atfork(nullptr, nullptr, renew_mutex_in_child) == 0;
}

void cupti_tick() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_pid != getpid()) {
    const bool child = g_pid != 0;
    g_pid = getpid();
    if (child) {  // a forked child: CUPTI's state does not follow it
      recorder::precise_reset();
      g_state = {};
      g_state.asked = g_asked;
      g_started = true, g_collecting = g_finished = false;
      g_nenabled = 0;
      if (g_asked) set_mode_locked(PreciseState::kUnavailable, "a forked child: CUPTI's collection stays with the parent");
      return;
    }
  }
  if (!g_asked || g_finished) return;
  InternalScope internal;  // CUPTI's own driver calls are not the program's
  if (!g_started && g_state.mode != PreciseState::kStoodAside) start_locked();
  if (g_collecting) g_api.flush_all(0);
  publish_locked();
}

void cupti_finish() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_finished || g_pid != getpid()) return;
  g_finished = true;
  InternalScope internal;
  stop_locked();
  publish_locked();
}

void cupti_foreign_call(const char* entry, const void* caller) {
  if (g_flags.internal > 0) return;  // cudashim's own (CUPTI calling its own entry points)
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_state.client[0] != '\0') return;  // stood aside already: one record, the first client
  InternalScope internal;
  copy_text(g_state.client, sizeof g_state.client, client_name(entry, caller));
  g_state.stood_aside_ns = monotonic_ns();
  g_state.asked = g_asked;
  if (g_collecting || (g_asked && !g_finished)) {
    stop_locked();
    g_started = true;  // never starts after a client arrived
    set_mode_locked(PreciseState::kStoodAside, "a profiler started using CUPTI: cudashim flushed and stopped its collection");
  } else {
    publish_locked();
  }
}

void* cupti_real(const char* name) {
  void* f = real_dl().dlsym(RTLD_NEXT, name);
  if (f == nullptr && g_handle != nullptr) f = real_dl().dlsym(g_handle, name);
  return f;
}

}  // namespace cudashim::shim
