#include <pthread.h>
// The fake CUDA driver: every exported entry point except cuGetProcAddress* (fakecuda_procaddr.cpp).
//
// Model: host memory stands in for device memory (a CUdeviceptr is a host address), kernels never
// run, streams and events complete at once (queries answer CUDA_SUCCESS), synchronizing calls sleep
// the configured delay. Handles are small heap objects; CUarray is taken to be a host byte buffer.
// Hot pass-through entry points (launches, queries, async copies) only count, copy and return: no
// lock, no allocation. Allocation bookkeeping sits behind one mutex.
#include "tests/fakecuda/fakecuda_internal.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

// ---------------------------------------------------------------- opaque handle types of cuda.h
struct CUctx_st {
  CUdevice dev;
  unsigned flags;
  bool primary;
};
struct CUstream_st {
  unsigned flags;
  int priority;
  CUcontext ctx = nullptr;                // current context at creation (cuStreamGetCtx)
  std::atomic<int64_t> busy_until{0};     // non-blocking streams: when their last kernel ends
};
struct CUevent_st {
  unsigned flags;
  std::atomic<int64_t> recorded_ns{-1};  // steady-clock time of the last cuEventRecord, -1 before
  std::atomic<int64_t> complete_at{0};   // when the work it follows ends (fakecuda_set_kernel_ns)
};
struct CUfunc_st {
  std::string name;
};
struct CUmod_st {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;  // one stable handle per name
};
struct CUkern_st {
  std::string name;
};
struct CUlib_st {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<CUkern_st>> kernels;  // one stable handle per name
};
struct CUmemPoolHandle_st {
  CUdevice dev;
  bool is_default;
};

namespace fc {

std::atomic<uint64_t> g_sync_delay_ns{0};

namespace {

constexpr uint64_t kDefaultTotalMem = 16ull << 30;
constexpr size_t kDeviceAlign = 256;          // cuMemAlloc alignment
constexpr size_t kHostAlign = 4096;           // pinned host allocations are page aligned
constexpr size_t kVmmGranularity = 2u << 20;  // cuMemGetAllocationGranularity
constexpr size_t kPitchAlign = 512;           // cuMemAllocPitch row alignment

// Reads an unsigned integer from the environment; `fallback` when unset or not a number.
uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 0);
  if (errno != 0 || end == s || *end != '\0') return fallback;
  return v;
}

// Process-wide settings from the environment, read once.
struct Config {
  int device_count;
  uint64_t total_mem;
  int driver_version;
  uint64_t launch_delay_ns;  // FAKECUDA_LAUNCH_DELAY_NS: a launch takes this long to queue its kernel
  uint64_t alloc_delay_us;   // FAKECUDA_ALLOC_DELAY_US: a device allocation takes this long (a driver's cudaMalloc)
};
const Config& cfg() {
  static const Config c{static_cast<int>(env_u64("FAKECUDA_DEVICE_COUNT", 1)),
                        env_u64("FAKECUDA_TOTAL_MEM", kDefaultTotalMem),
                        static_cast<int>(env_u64("FAKECUDA_DRIVER_VERSION", 13000)),
                        env_u64("FAKECUDA_LAUNCH_DELAY_NS", 0), env_u64("FAKECUDA_ALLOC_DELAY_US", 0)};
  return c;
}

// Per-device state: the primary context and the default memory pool.
struct DeviceState {
  CUctx_st primary;
  int primary_refs = 0;
  CUmemPoolHandle_st default_pool;
};

// What a tracked address range is.
enum class MemKind : uint8_t { Device, Managed, PinnedHost, Registered, MappedDevice, MappedHost };

struct Range {
  size_t size;
  MemKind kind;
  bool low = false;  // mmapped below 4 GiB for the legacy 32-bit cuMemAlloc; released with munmap
};

// All mutable shared state except counters. Leaked on purpose: usable from other libraries'
// destructors at exit.
struct State {
  std::mutex mu;
  std::vector<DeviceState> devices;
  std::map<uintptr_t, Range> ranges;         // live allocations, registrations, VMM mappings by start
  std::map<uintptr_t, size_t> reservations;  // cuMemAddressReserve ranges by start
  uint64_t device_bytes = 0;                 // bytes held by cuMemAlloc*/Pitch/Managed/async allocations
};
State& st() {
  static State* s = [] {
    auto* n = new State;
    n->devices.resize(static_cast<size_t>(cfg().device_count > 0 ? cfg().device_count : 0));
    for (size_t i = 0; i < n->devices.size(); ++i) {
      n->devices[i].primary = CUctx_st{static_cast<CUdevice>(i), 0, true};
      n->devices[i].default_pool = CUmemPoolHandle_st{static_cast<CUdevice>(i), true};
    }
    return n;
  }();
  return *s;
}

// A process that forks while another thread holds st().mu (a DataLoader forking
// while a worker thread allocates) must not hand a locked mutex to the child.
__attribute__((constructor)) void fakecuda_register_fork_handlers() {
  pthread_atfork([] { st().mu.lock(); }, [] { st().mu.unlock(); }, [] { st().mu.unlock(); });
}

// The calling thread's context stack; the top is the current context.
thread_local std::vector<CUcontext> t_ctx_stack;

bool valid_device(CUdevice d) { return d >= 0 && d < cfg().device_count; }

// Sleeps the configured synchronisation delay (no-op when it is 0).
void sync_delay() {
  uint64_t ns = g_sync_delay_ns.load(std::memory_order_relaxed);
  if (ns == 0) return;
  timespec ts{static_cast<time_t>(ns / 1000000000u), static_cast<long>(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

// Returns `r` after the synchronisation delay when `r` is success (failures return at once).
// FAKECUDA_FAIL_SYNC_WITH=<code>: every synchronizing call returns that code (e.g.
// 700, CUDA_ERROR_ILLEGAL_ADDRESS), as a real context does after a kernel faulted.
CUresult sync_failure() {
  static const CUresult code = [] {
    const char* v = std::getenv("FAKECUDA_FAIL_SYNC_WITH");
    return v ? static_cast<CUresult>(std::atoi(v)) : CUDA_SUCCESS;
  }();
  return code;
}

CUresult synced(CUresult r) {
  if (r == CUDA_SUCCESS) sync_delay();
  if (r == CUDA_SUCCESS && sync_failure() != CUDA_SUCCESS) return sync_failure();
  return r;
}

void* as_ptr(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
CUdeviceptr as_dptr(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }
char* as_bytes(CUarray a) { return reinterpret_cast<char*>(a); }

// Range containing address `p` (caller holds st().mu); nullptr when none. `*start` gets its start.
const Range* find_range(uintptr_t p, uintptr_t* start) {
  auto& ranges = st().ranges;
  auto it = ranges.upper_bound(p);
  if (it == ranges.begin()) return nullptr;
  --it;
  if (p >= it->first + it->second.size) return nullptr;
  if (start) *start = it->first;
  return &it->second;
}

size_t page_round(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

// Device-side allocation of `bytes` counted against the device memory total. `low`: the address
// must fit the 32-bit CUdeviceptr_v1 of the legacy ABI (mmap MAP_32BIT; unavailable off x86-64).
CUresult alloc_device(CUdeviceptr* out, size_t bytes, MemKind kind, bool low = false) {
  if (out == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (const uint64_t us = cfg().alloc_delay_us) {
    timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000 * 1000)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
  }
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  if (bytes > cfg().total_mem - s.device_bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  void* p = nullptr;
  if (low) {
#ifdef MAP_32BIT
    p = mmap(nullptr, page_round(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
#else
    return CUDA_ERROR_OUT_OF_MEMORY;
#endif
  } else if (posix_memalign(&p, kDeviceAlign, bytes) != 0) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  s.ranges[reinterpret_cast<uintptr_t>(p)] = Range{bytes, kind, low};
  s.device_bytes += bytes;
  *out = as_dptr(p);
  return CUDA_SUCCESS;
}

void wait_device_idle();

// Frees a device-side allocation by its start address; 0 is a no-op. Like the real
// cuMemFree, it first waits for the device's running kernels.
CUresult free_device(CUdeviceptr dptr) {
  if (dptr == 0) return CUDA_SUCCESS;
  wait_device_idle();
  State& s = st();
  Range r{};
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.ranges.find(static_cast<uintptr_t>(dptr));
    if (it == s.ranges.end() || (it->second.kind != MemKind::Device && it->second.kind != MemKind::Managed))
      return CUDA_ERROR_INVALID_VALUE;
    r = it->second;
    s.device_bytes -= r.size;
    s.ranges.erase(it);
  }
  if (r.low) {
    munmap(as_ptr(dptr), page_round(r.size));
  } else {
    std::free(as_ptr(dptr));
  }
  return CUDA_SUCCESS;
}

// Page-locked host allocation (not counted against device memory).
CUresult alloc_host(void** out, size_t bytes) {
  if (out == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  if (posix_memalign(&p, kHostAlign, bytes) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  s.ranges[reinterpret_cast<uintptr_t>(p)] = Range{bytes, MemKind::PinnedHost};
  *out = p;
  return CUDA_SUCCESS;
}

CUresult free_host(void* p) {
  State& s = st();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.ranges.find(reinterpret_cast<uintptr_t>(p));
    if (it == s.ranges.end() || it->second.kind != MemKind::PinnedHost) return CUDA_ERROR_INVALID_VALUE;
    s.ranges.erase(it);
  }
  std::free(p);
  return CUDA_SUCCESS;
}

CUresult host_register(void* p, size_t bytes) {
  if (p == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  if (find_range(reinterpret_cast<uintptr_t>(p), nullptr) != nullptr) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  s.ranges[reinterpret_cast<uintptr_t>(p)] = Range{bytes, MemKind::Registered};
  return CUDA_SUCCESS;
}

// ---------------------------------------------------------------- copies and memsets
// Copies n bytes; overlapping ranges are allowed (memmove).
CUresult copy_bytes(void* dst, const void* src, size_t n) {
  if (n == 0) return CUDA_SUCCESS;
  if (dst == nullptr || src == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::memmove(dst, src, n);
  return CUDA_SUCCESS;
}

// Array copies: CUarray is a host byte buffer; offsets are byte offsets into it.
CUresult copy_to_array(CUarray a, size_t off, const void* src, size_t n) {
  return a == nullptr ? CUDA_ERROR_INVALID_VALUE : copy_bytes(as_bytes(a) + off, src, n);
}
CUresult copy_from_array(void* dst, CUarray a, size_t off, size_t n) {
  return a == nullptr ? CUDA_ERROR_INVALID_VALUE : copy_bytes(dst, as_bytes(a) + off, n);
}

// One side of a 2D/3D copy: base address, row pitch and rows per slice.
struct Side {
  char* base;
  size_t pitch;
  size_t height;
};

// Resolves a descriptor side. Arrays are packed (pitch = width, height = rows of the copy).
Side resolve(CUmemorytype type, const void* host, CUdeviceptr dev, CUarray arr, size_t pitch, size_t height,
             size_t width_bytes, size_t rows) {
  switch (type) {
    case CU_MEMORYTYPE_HOST: return Side{static_cast<char*>(const_cast<void*>(host)), pitch, height};
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED: return Side{static_cast<char*>(as_ptr(dev)), pitch, height};
    case CU_MEMORYTYPE_ARRAY: return Side{as_bytes(arr), width_bytes, rows};
  }
  return Side{nullptr, 0, 0};
}

// Row-by-row box copy shared by the 2D, 3D and 3D-peer descriptors.
template <class Desc>
CUresult copy_box(const Desc* c, size_t src_z, size_t dst_z, size_t src_height, size_t dst_height, size_t depth) {
  if (c == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Side s = resolve(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcPitch, src_height, c->WidthInBytes,
                   c->Height);
  Side d = resolve(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstPitch, dst_height, c->WidthInBytes,
                   c->Height);
  if (c->WidthInBytes == 0 || c->Height == 0 || depth == 0) return CUDA_SUCCESS;
  if (s.base == nullptr || d.base == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (c->Height > 1 && (s.pitch < c->WidthInBytes || d.pitch < c->WidthInBytes)) return CUDA_ERROR_INVALID_VALUE;
  if (depth > 1 && (s.height < c->Height || d.height < c->Height)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t z = 0; z < depth; ++z) {
    for (size_t y = 0; y < c->Height; ++y) {
      const char* from = s.base + ((src_z + z) * s.height + c->srcY + y) * s.pitch + c->srcXInBytes;
      char* to = d.base + ((dst_z + z) * d.height + c->dstY + y) * d.pitch + c->dstXInBytes;
      std::memmove(to, from, c->WidthInBytes);
    }
  }
  return CUDA_SUCCESS;
}

CUresult copy_2d(const CUDA_MEMCPY2D* c) { return copy_box(c, 0, 0, 0, 0, 1); }

template <class Desc>
CUresult copy_3d(const Desc* c) {
  if (c == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return copy_box(c, c->srcZ, c->dstZ, c->srcHeight, c->dstHeight, c->Depth);
}

// Fills `height` rows of `width` elements of type T, rows `pitch` bytes apart.
template <class T>
CUresult fill_2d(CUdeviceptr dst, size_t pitch, T value, size_t width, size_t height) {
  if (width == 0 || height == 0) return CUDA_SUCCESS;
  if (dst == 0 || dst % sizeof(T) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (height > 1 && pitch < width * sizeof(T)) return CUDA_ERROR_INVALID_VALUE;
  char* base = static_cast<char*>(as_ptr(dst));
  for (size_t y = 0; y < height; ++y) {
    T* row = reinterpret_cast<T*>(base + y * pitch);
    if constexpr (sizeof(T) == 1) {
      std::memset(row, value, width);
    } else {
      for (size_t x = 0; x < width; ++x) row[x] = value;
    }
  }
  return CUDA_SUCCESS;
}
template <class T>
CUresult fill_1d(CUdeviceptr dst, T value, size_t n) {
  return fill_2d<T>(dst, n * sizeof(T), value, n, 1);
}

// ---------------------------------------------------------------- contexts, streams, events
CUresult ctx_create(CUcontext* pctx, unsigned flags, CUdevice dev) {
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *pctx = new CUctx_st{dev, flags, false};
  t_ctx_stack.push_back(*pctx);
  return CUDA_SUCCESS;
}

CUresult ctx_destroy(CUcontext ctx) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ctx->primary) return CUDA_ERROR_INVALID_CONTEXT;
  std::erase(t_ctx_stack, ctx);
  delete ctx;
  return CUDA_SUCCESS;
}

CUresult ctx_push(CUcontext ctx) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  t_ctx_stack.push_back(ctx);
  return CUDA_SUCCESS;
}

CUresult ctx_pop(CUcontext* pctx) {
  if (t_ctx_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx) *pctx = t_ctx_stack.back();
  t_ctx_stack.pop_back();
  return CUDA_SUCCESS;
}

CUresult ctx_set_current(CUcontext ctx) {
  if (ctx == nullptr) {
    if (!t_ctx_stack.empty()) t_ctx_stack.pop_back();
  } else if (t_ctx_stack.empty()) {
    t_ctx_stack.push_back(ctx);
  } else {
    t_ctx_stack.back() = ctx;
  }
  return CUDA_SUCCESS;
}

// Device of `ctx`, or of the current context when `ctx` is NULL.
CUresult ctx_get_device(CUdevice* dev, CUcontext ctx) {
  if (dev == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ctx == nullptr) {
    if (t_ctx_stack.empty() || t_ctx_stack.back() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    ctx = t_ctx_stack.back();
  }
  *dev = ctx->dev;
  return CUDA_SUCCESS;
}

CUresult primary_retain(CUcontext* pctx, CUdevice dev) {
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  DeviceState& d = s.devices[static_cast<size_t>(dev)];
  ++d.primary_refs;
  *pctx = &d.primary;
  return CUDA_SUCCESS;
}

CUresult primary_release(CUdevice dev) {
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  DeviceState& d = s.devices[static_cast<size_t>(dev)];
  if (d.primary_refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --d.primary_refs;
  return CUDA_SUCCESS;
}

CUresult primary_set_flags(CUdevice dev, unsigned flags) {
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  s.devices[static_cast<size_t>(dev)].primary.flags = flags;
  return CUDA_SUCCESS;
}

bool is_special_stream(CUstream s) { return s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD; }

CUresult stream_create(CUstream* ph, unsigned flags, int priority) {
  if (ph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *ph = new CUstream_st{flags, priority};
  (*ph)->ctx = t_ctx_stack.empty() ? nullptr : t_ctx_stack.back();
  return CUDA_SUCCESS;
}

CUresult stream_destroy(CUstream s) {
  if (is_special_stream(s)) return CUDA_ERROR_INVALID_HANDLE;
  delete s;
  return CUDA_SUCCESS;
}

CUresult event_destroy(CUevent e) {
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  delete e;
  return CUDA_SUCCESS;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---- kernels that take time (fakecuda_set_kernel_ns). Timelines: one per non-blocking
// stream, one shared by the legacy stream, the per-thread default streams and blocking
// streams (conservative for the latter: the real ones only wait for the legacy stream).
std::atomic<int64_t> g_kernel_ns{0};
std::atomic<int64_t> g_blocking_busy{0};  // end of the last kernel on the shared timeline
std::atomic<int64_t> g_max_busy{0};       // end of the last kernel anywhere

bool is_non_blocking(CUstream s) { return !is_special_stream(s) && (s->flags & CU_STREAM_NON_BLOCKING) != 0; }
std::atomic<int64_t>& timeline_of(CUstream s) { return is_non_blocking(s) ? s->busy_until : g_blocking_busy; }

void sleep_until_ns(int64_t t) {
  if (t <= 0) return;  // no kernel ever took time: no clock read
  for (int64_t now = now_ns(); now < t; now = now_ns()) {
    const int64_t left = t - now;
    timespec ts{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
    nanosleep(&ts, nullptr);
  }
}

// Kernels named "fakecuda_writer" keep writing their byte value over their buffer until
// they end, as a real kernel would: params {CUdeviceptr*, size_t*, unsigned char*}.
struct Writer {
  uintptr_t start;
  size_t size;
  int64_t end;
};
std::mutex g_writers_mu;
std::vector<Writer> g_writers;
std::atomic<int> g_active_writers{0};

void start_writer(CUdeviceptr p, size_t n, unsigned char v, int64_t end) {
  {
    std::lock_guard<std::mutex> lock(g_writers_mu);
    g_writers.push_back({static_cast<uintptr_t>(p), n, end});
  }
  g_active_writers.fetch_add(1);
  std::thread([p, n, v, end] {
    while (now_ns() < end) {
      std::memset(as_ptr(p), v, n);
      timespec ts{0, 100000};
      nanosleep(&ts, nullptr);
    }
    {
      std::lock_guard<std::mutex> lock(g_writers_mu);
      for (auto it = g_writers.begin(); it != g_writers.end(); ++it)
        if (it->start == static_cast<uintptr_t>(p) && it->end == end) {
          g_writers.erase(it);
          break;
        }
    }
    g_active_writers.fetch_sub(1);
  }).detach();
}

// True when every writer kernel that ends by `t` has made its last store.
bool writers_done_by(int64_t t) {
  std::lock_guard<std::mutex> lock(g_writers_mu);
  for (const Writer& w : g_writers)
    if (w.end <= t) return false;
  return true;
}

// An event is complete once its timeline reached it and the kernels before it stopped storing.
bool event_complete(CUevent e) {
  const int64_t t = e->complete_at.load();
  return now_ns() >= t && writers_done_by(t);
}
void event_wait(CUevent e) {
  sleep_until_ns(e->complete_at.load());
  while (!writers_done_by(e->complete_at.load())) {
    timespec ts{0, 50000};
    nanosleep(&ts, nullptr);
  }
}

// Waits for every kernel (cuCtxSynchronize, and the implicit sync of cuMemFree).
void wait_device_idle() {
  sleep_until_ns(g_max_busy.load());
  while (g_active_writers.load() != 0) {
    timespec ts{0, 50000};
    nanosleep(&ts, nullptr);
  }
}

// Every kernel that took time, for the CUPTI double (tests/fakecuda/fakecupti.cpp,
// fakecuda_kernel_runs): its [start, end) on the steady clock and its stream.
struct KernelRun {
  int64_t start, end;
};
constexpr uint64_t kMaxRuns = 1u << 16;
KernelRun g_runs[kMaxRuns];
std::atomic<uint64_t> g_nruns{0};
std::atomic<uint64_t> g_runs_ready{0};

void log_run(int64_t start, int64_t end) {
  const uint64_t k = g_nruns.fetch_add(1);
  if (k >= kMaxRuns) return;
  g_runs[k] = {start, end};
  uint64_t r = k;  // published in order: the reader sees a prefix
  while (!g_runs_ready.compare_exchange_weak(r, k + 1)) r = k;
}

CUresult launch(CUfunction f, CUstream stream = nullptr, void** params = nullptr) {
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const int64_t dur = g_kernel_ns.load(std::memory_order_relaxed);
  if (dur <= 0) return CUDA_SUCCESS;
  if (cfg().launch_delay_ns > 0) sleep_until_ns(now_ns() + static_cast<int64_t>(cfg().launch_delay_ns));
  std::atomic<int64_t>& tl = timeline_of(stream);
  int64_t cur = tl.load(), end = 0;
  do {
    end = (cur > now_ns() ? cur : now_ns()) + dur;
  } while (!tl.compare_exchange_weak(cur, end));
  int64_t m = g_max_busy.load();
  while (m < end && !g_max_busy.compare_exchange_weak(m, end)) {
  }
  log_run(end - dur, end);
  if (f->name == "fakecuda_writer" && params != nullptr && params[0] && params[1] && params[2])
    start_writer(*static_cast<CUdeviceptr*>(params[0]), *static_cast<size_t*>(params[1]),
                 *static_cast<unsigned char*>(params[2]), end);
  return CUDA_SUCCESS;
}

CUresult event_record(CUevent e, CUstream stream = nullptr) {
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  e->recorded_ns.store(now_ns(), std::memory_order_relaxed);
  e->complete_at.store(timeline_of(stream).load(), std::memory_order_relaxed);
  return CUDA_SUCCESS;
}

CUresult event_elapsed(float* ms, CUevent start, CUevent end) {
  if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (start == nullptr || end == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
  int64_t a = start->recorded_ns.load(std::memory_order_relaxed);
  int64_t b = end->recorded_ns.load(std::memory_order_relaxed);
  if (a < 0 || b < 0) return CUDA_ERROR_INVALID_HANDLE;
  *ms = static_cast<float>(static_cast<double>(b - a) / 1e6);
  return CUDA_SUCCESS;
}

CUresult launch_ex(const CUlaunchConfig* config, CUfunction f, void** params) {
  return config == nullptr ? CUDA_ERROR_INVALID_VALUE : launch(f, config->hStream, params);
}

// ---------------------------------------------------------------- memory pools, VMM, IPC
CUresult alloc_from_pool(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool) {
  return pool == nullptr ? CUDA_ERROR_INVALID_VALUE : alloc_device(dptr, bytes, MemKind::Device);
}

// A cuMemCreate handle: its size and whether it lives on a device or in host memory.
struct PhysHandle {
  size_t size;
  bool on_host;
};

CUresult ipc_open(CUdeviceptr* pdptr, const CUipcMemHandle& handle) {
  if (pdptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr p = 0;
  std::memcpy(&p, handle.reserved, sizeof p);
  if (p == 0) return CUDA_ERROR_INVALID_HANDLE;
  *pdptr = p;
  return CUDA_SUCCESS;
}

// ---------------------------------------------------------------- modules, libraries
// A module/library from an in-memory image (not parsed; only its presence is checked).
CUresult module_new(CUmodule* m, const void* image) {
  if (m == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *m = new CUmod_st;
  return CUDA_SUCCESS;
}
CUresult library_new(CUlibrary* l, const void* code) {
  if (l == nullptr || code == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *l = new CUlib_st;
  return CUDA_SUCCESS;
}

// A module/library from a file: the file must be readable, its content is not parsed.
CUresult module_from_file(CUmodule* m, const char* path) {
  if (m == nullptr || path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return access(path, R_OK) != 0 ? CUDA_ERROR_FILE_NOT_FOUND : module_new(m, path);
}
CUresult library_from_file(CUlibrary* l, const char* path) {
  if (l == nullptr || path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return access(path, R_OK) != 0 ? CUDA_ERROR_FILE_NOT_FOUND : library_new(l, path);
}

// ---------------------------------------------------------------- errors
struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};
#define FC_ERR(code, text) {code, #code, text}
constexpr ErrorText kErrors[] = {
    FC_ERR(CUDA_SUCCESS, "no error"),
    FC_ERR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    FC_ERR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    FC_ERR(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    FC_ERR(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    FC_ERR(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
    FC_ERR(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
    FC_ERR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    FC_ERR(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
    FC_ERR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    FC_ERR(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current"),
    FC_ERR(CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed"),
    FC_ERR(CUDA_ERROR_UNMAP_FAILED, "unmapping of buffer object failed"),
    FC_ERR(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
    FC_ERR(CUDA_ERROR_NOT_MAPPED, "resource not mapped"),
    FC_ERR(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
    FC_ERR(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
    FC_ERR(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
    FC_ERR(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found"),
    FC_ERR(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object initialization failed"),
    FC_ERR(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS"),
    FC_ERR(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    FC_ERR(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state"),
    FC_ERR(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    FC_ERR(CUDA_ERROR_NOT_READY, "device not ready"),
    FC_ERR(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
    FC_ERR(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
    FC_ERR(CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated"),
    FC_ERR(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"),
    FC_ERR(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled"),
    FC_ERR(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "cannot set while device is active in this process"),
    FC_ERR(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
    FC_ERR(CUDA_ERROR_ASSERT, "device-side assert triggered"),
    FC_ERR(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped"),
    FC_ERR(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region"),
    FC_ERR(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address"),
    FC_ERR(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
    FC_ERR(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
    FC_ERR(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    FC_ERR(CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized"),
    FC_ERR(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system has unsupported display driver / cuda driver combination"),
    FC_ERR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"),
    FC_ERR(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture"),
    FC_ERR(CUDA_ERROR_TIMEOUT, "wait operation timed out"),
    FC_ERR(CUDA_ERROR_UNKNOWN, "unknown error"),
};
#undef FC_ERR

const ErrorText* find_error(CUresult e) {
  for (const ErrorText& t : kErrors)
    if (t.code == e) return &t;
  return nullptr;
}

// Reads FAKECUDA_SYNC_DELAY_US when the library loads.
__attribute__((constructor)) void load_sync_delay() {
  g_sync_delay_ns.store(env_u64("FAKECUDA_SYNC_DELAY_US", 0) * 1000u, std::memory_order_relaxed);
}

// Reads FAKECUDA_KERNEL_US when the library loads.
__attribute__((constructor)) void load_kernel_time() {
  g_kernel_ns.store(static_cast<int64_t>(env_u64("FAKECUDA_KERNEL_US", 0) * 1000u), std::memory_order_relaxed);
}

}  // namespace
}  // namespace fc

using namespace fc;

// ================================================================ initialisation, devices
FC_ENTRY(cuInit, (unsigned int Flags), CUDA_SUCCESS)

FC_ENTRY(cuDriverGetVersion, (int* driverVersion),
         driverVersion == nullptr ? CUDA_ERROR_INVALID_VALUE : (*driverVersion = cfg().driver_version, CUDA_SUCCESS))

FC_ENTRY(cuDeviceGet, (CUdevice* device, int ordinal),
         device == nullptr        ? CUDA_ERROR_INVALID_VALUE
         : !valid_device(ordinal) ? CUDA_ERROR_INVALID_DEVICE
                                  : (*device = ordinal, CUDA_SUCCESS))

FC_ENTRY(cuDeviceGetCount, (int* count),
         count == nullptr ? CUDA_ERROR_INVALID_VALUE : (*count = cfg().device_count, CUDA_SUCCESS))

// Device d sits at PCI 0000:(0x10+d):00.0 (the fake NVML of the tests reports the same).
FC_EXPORT CUresult CUDAAPI cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  count(k_cuDeviceGetPCIBusId);
  if (pciBusId == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(pciBusId, static_cast<size_t>(len), "0000:%02X:00.0", 0x10 + dev);
  return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  count(k_cuDeviceGetName);
  if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(name, static_cast<size_t>(len), "%s", "cudashim fake device");
  return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  count(k_cuDeviceGetAttribute);
  if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  int v = 0;  // attributes not listed: 0 (unsupported feature)
  switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: v = 50 << 20; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: v = 3; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: v = static_cast<int>(dev); break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: v = 1; break;
    default: break;
  }
  *pi = v;
  return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  count(k_cuDeviceComputeCapability);
  if (major == nullptr || minor == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *major = 9;
  *minor = 0;
  return CUDA_SUCCESS;
}

FC_ENTRY(cuDeviceTotalMem_v2, (size_t* bytes, CUdevice dev),
         bytes == nullptr     ? CUDA_ERROR_INVALID_VALUE
         : !valid_device(dev) ? CUDA_ERROR_INVALID_DEVICE
                              : (*bytes = cfg().total_mem, CUDA_SUCCESS))

FC_ENTRY(cuDevicePrimaryCtxRetain, (CUcontext* pctx, CUdevice dev), primary_retain(pctx, dev))
FC_ENTRY(cuDevicePrimaryCtxRelease, (CUdevice dev), primary_release(dev))
FC_ENTRY(cuDevicePrimaryCtxRelease_v2, (CUdevice dev), primary_release(dev))
FC_ENTRY(cuDevicePrimaryCtxSetFlags, (CUdevice dev, unsigned int flags), primary_set_flags(dev, flags))
FC_ENTRY(cuDevicePrimaryCtxSetFlags_v2, (CUdevice dev, unsigned int flags), primary_set_flags(dev, flags))

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  count(k_cuDevicePrimaryCtxGetState);
  if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  const DeviceState& d = s.devices[static_cast<size_t>(dev)];
  *flags = d.primary.flags;
  *active = d.primary_refs > 0 ? 1 : 0;
  return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
  count(k_cuDeviceGetDefaultMemPool);
  if (pool_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *pool_out = &st().devices[static_cast<size_t>(dev)].default_pool;
  return CUDA_SUCCESS;
}

// ================================================================ contexts
FC_ENTRY(cuCtxCreate, (CUcontext* pctx, unsigned int flags, CUdevice dev), ctx_create(pctx, flags, dev))
FC_ENTRY(cuCtxCreate_v2, (CUcontext* pctx, unsigned int flags, CUdevice dev), ctx_create(pctx, flags, dev))
FC_ENTRY(cuCtxCreate_v3,
         (CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams, unsigned int flags, CUdevice dev),
         ctx_create(pctx, flags, dev))
FC_ENTRY(cuCtxCreate_v4, (CUcontext* pctx, CUctxCreateParams* ctxCreateParams, unsigned int flags, CUdevice dev),
         ctx_create(pctx, flags, dev))
FC_ENTRY(cuCtxDestroy, (CUcontext ctx), ctx_destroy(ctx))
FC_ENTRY(cuCtxDestroy_v2, (CUcontext ctx), ctx_destroy(ctx))
FC_ENTRY(cuCtxSetCurrent, (CUcontext ctx), ctx_set_current(ctx))
FC_ENTRY(cuCtxGetCurrent, (CUcontext* pctx),
         pctx == nullptr ? CUDA_ERROR_INVALID_VALUE
                         : (*pctx = t_ctx_stack.empty() ? nullptr : t_ctx_stack.back(), CUDA_SUCCESS))
FC_ENTRY(cuCtxPushCurrent, (CUcontext ctx), ctx_push(ctx))
FC_ENTRY(cuCtxPushCurrent_v2, (CUcontext ctx), ctx_push(ctx))
FC_ENTRY(cuCtxPopCurrent, (CUcontext* pctx), ctx_pop(pctx))
FC_ENTRY(cuCtxPopCurrent_v2, (CUcontext* pctx), ctx_pop(pctx))
FC_ENTRY(cuCtxGetDevice, (CUdevice* device), ctx_get_device(device, nullptr))
FC_ENTRY(cuCtxSynchronize, (void), (wait_device_idle(), synced(CUDA_SUCCESS)))
#if CUDA_VERSION >= 13000
FC_ENTRY(cuCtxGetDevice_v2, (CUdevice* device, CUcontext ctx), ctx_get_device(device, ctx))
FC_ENTRY(cuCtxSynchronize_v2, (CUcontext ctx), (wait_device_idle(), synced(CUDA_SUCCESS)))
#endif

// ================================================================ export tables, errors
FC_EXPORT CUresult CUDAAPI cuGetExportTable(const void** ppExportTable, const CUuuid* pExportTableId) {
  count(k_cuGetExportTable);
  if (ppExportTable) *ppExportTable = nullptr;
  return CUDA_ERROR_NOT_SUPPORTED;  // private tables of the real driver: a double cannot provide them
}

FC_EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char** pStr) {
  count(k_cuGetErrorName);
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* t = find_error(error);
  *pStr = t ? t->name : nullptr;
  return t ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char** pStr) {
  count(k_cuGetErrorString);
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* t = find_error(error);
  *pStr = t ? t->text : nullptr;
  return t ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// ================================================================ memory
FC_EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1* dptr, unsigned int bytesize) {
  count(k_cuMemAlloc);
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr p = 0;
  CUresult r = alloc_device(&p, bytesize, MemKind::Device, /*low=*/true);
  if (r == CUDA_SUCCESS) *dptr = static_cast<CUdeviceptr_v1>(p);
  return r;
}
FC_ENTRY(cuMemAlloc_v2, (CUdeviceptr* dptr, size_t bytesize), alloc_device(dptr, bytesize, MemKind::Device))

FC_EXPORT CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                                              unsigned int ElementSizeBytes) {
  count(k_cuMemAllocPitch_v2);
  if (pPitch == nullptr || WidthInBytes == 0 || Height == 0) return CUDA_ERROR_INVALID_VALUE;
  if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) return CUDA_ERROR_INVALID_VALUE;
  size_t pitch = (WidthInBytes + kPitchAlign - 1) / kPitchAlign * kPitchAlign;
  CUresult r = alloc_device(dptr, pitch * Height, MemKind::Device);
  if (r == CUDA_SUCCESS) *pPitch = pitch;
  return r;
}

FC_ENTRY(cuMemAllocManaged, (CUdeviceptr* dptr, size_t bytesize, unsigned int flags),
         alloc_device(dptr, bytesize, MemKind::Managed))
FC_ENTRY(cuMemFree, (CUdeviceptr_v1 dptr), synced(free_device(dptr)))
FC_ENTRY(cuMemFree_v2, (CUdeviceptr dptr), synced(free_device(dptr)))
FC_ENTRY(cuMemAllocHost_v2, (void** pp, size_t bytesize), alloc_host(pp, bytesize))
FC_ENTRY(cuMemHostAlloc, (void** pp, size_t bytesize, unsigned int Flags), alloc_host(pp, bytesize))
FC_ENTRY(cuMemFreeHost, (void* p), synced(free_host(p)))
FC_ENTRY(cuMemHostRegister, (void* p, size_t bytesize, unsigned int Flags), host_register(p, bytesize))
FC_ENTRY(cuMemHostRegister_v2, (void* p, size_t bytesize, unsigned int Flags), host_register(p, bytesize))

FC_EXPORT CUresult CUDAAPI cuMemHostUnregister(void* p) {
  count(k_cuMemHostUnregister);
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.ranges.find(reinterpret_cast<uintptr_t>(p));
  if (it == s.ranges.end() || it->second.kind != MemKind::Registered) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  s.ranges.erase(it);
  return CUDA_SUCCESS;
}

// Pinned and registered host memory is mapped at the same address (unified addressing).
FC_EXPORT CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
  count(k_cuMemHostGetDevicePointer_v2);
  if (pdptr == nullptr || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  const Range* r = find_range(reinterpret_cast<uintptr_t>(p), nullptr);
  if (r == nullptr || (r->kind != MemKind::PinnedHost && r->kind != MemKind::Registered))
    return CUDA_ERROR_INVALID_VALUE;
  *pdptr = as_dptr(p);
  return CUDA_SUCCESS;
}

FC_ENTRY_PT(cuMemAllocAsync, cuMemAllocAsync_ptsz, (CUdeviceptr* dptr, size_t bytesize, CUstream hStream),
            alloc_device(dptr, bytesize, MemKind::Device))
FC_ENTRY_PT(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz,
            (CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream),
            alloc_from_pool(dptr, bytesize, pool))
FC_ENTRY_PT(cuMemFreeAsync, cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream), free_device(dptr))

FC_EXPORT CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
  count(k_cuMemPoolCreate);
  if (pool == nullptr || poolProps == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pool = new CUmemPoolHandle_st{poolProps->location.id, false};
  return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool) {
  count(k_cuMemPoolDestroy);
  if (pool == nullptr || pool->is_default) return CUDA_ERROR_INVALID_VALUE;
  delete pool;
  return CUDA_SUCCESS;
}

FC_ENTRY(cuMemPoolTrimTo, (CUmemoryPool pool, size_t minBytesToKeep),
         pool == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS)

FC_EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                       const CUmemAllocationProp* prop, unsigned long long flags) {
  count(k_cuMemCreate);
  if (handle == nullptr || prop == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  auto* h = new PhysHandle{size, prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE};
  *handle = static_cast<CUmemGenericAllocationHandle>(reinterpret_cast<uintptr_t>(h));
  return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle) {
  count(k_cuMemRelease);
  if (handle == 0) return CUDA_ERROR_INVALID_VALUE;
  delete reinterpret_cast<PhysHandle*>(static_cast<uintptr_t>(handle));
  return CUDA_SUCCESS;
}

// Mapping records the range (for cuPointerGetAttribute); the reservation's host memory backs it.
FC_EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                    unsigned long long flags) {
  count(k_cuMemMap);
  if (handle == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (ptr == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
  const auto* h = reinterpret_cast<const PhysHandle*>(static_cast<uintptr_t>(handle));
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.reservations.upper_bound(static_cast<uintptr_t>(ptr));
  if (it == s.reservations.begin()) return CUDA_ERROR_INVALID_VALUE;
  --it;
  if (ptr + size > it->first + it->second) return CUDA_ERROR_INVALID_VALUE;
  if (find_range(static_cast<uintptr_t>(ptr), nullptr) != nullptr) return CUDA_ERROR_ALREADY_MAPPED;
  s.ranges[static_cast<uintptr_t>(ptr)] = Range{size, h->on_host ? MemKind::MappedHost : MemKind::MappedDevice};
  return CUDA_SUCCESS;
}

// Drops the mapping records that start inside [begin, begin+size) (caller holds st().mu).
static void drop_mappings(uintptr_t begin, size_t size) {
  auto& ranges = st().ranges;
  for (auto it = ranges.lower_bound(begin); it != ranges.end() && it->first < begin + size;) {
    bool mapped = it->second.kind == MemKind::MappedDevice || it->second.kind == MemKind::MappedHost;
    it = mapped ? ranges.erase(it) : std::next(it);
  }
}

FC_EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size) {
  count(k_cuMemUnmap);
  if (ptr == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(st().mu);
  drop_mappings(static_cast<uintptr_t>(ptr), size);
  return CUDA_SUCCESS;
}

FC_ENTRY(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count),
         ptr == 0 || size == 0 || (desc == nullptr && count != 0) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS)

FC_EXPORT CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                               unsigned long long flags) {
  count(k_cuMemAddressReserve);
  if (ptr == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (alignment == 0) alignment = kVmmGranularity;
  if ((alignment & (alignment - 1)) != 0 || alignment % sizeof(void*) != 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, size) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  s.reservations[reinterpret_cast<uintptr_t>(p)] = size;
  *ptr = as_dptr(p);
  return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  count(k_cuMemAddressFree);
  State& s = st();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.reservations.find(static_cast<uintptr_t>(ptr));
    if (it == s.reservations.end()) return CUDA_ERROR_INVALID_VALUE;
    drop_mappings(it->first, it->second);
    s.reservations.erase(it);
  }
  std::free(as_ptr(ptr));
  return CUDA_SUCCESS;
}

FC_ENTRY(cuMemGetAllocationGranularity,
         (size_t* granularity, const CUmemAllocationProp* prop, CUmemAllocationGranularity_flags option),
         granularity == nullptr || prop == nullptr ? CUDA_ERROR_INVALID_VALUE
                                                   : (*granularity = kVmmGranularity, CUDA_SUCCESS))

// The handle's bytes carry the device pointer; opening it gives that pointer back.
FC_EXPORT CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) {
  count(k_cuIpcGetMemHandle);
  if (pHandle == nullptr || dptr == 0) return CUDA_ERROR_INVALID_VALUE;
  std::memset(pHandle, 0, sizeof *pHandle);
  std::memcpy(pHandle->reserved, &dptr, sizeof dptr);
  return CUDA_SUCCESS;
}
FC_ENTRY(cuIpcOpenMemHandle, (CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags), ipc_open(pdptr, handle))
FC_ENTRY(cuIpcOpenMemHandle_v2, (CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags),
         ipc_open(pdptr, handle))
FC_ENTRY(cuIpcCloseMemHandle, (CUdeviceptr dptr), dptr == 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS)

// free = total - bytes held by device allocations; either out-parameter may be NULL.
FC_EXPORT CUresult CUDAAPI cuMemGetInfo_v2(size_t* free, size_t* total) {
  count(k_cuMemGetInfo_v2);
  uint64_t used = 0;
  {
    std::lock_guard<std::mutex> lock(st().mu);
    used = st().device_bytes;
  }
  if (free) *free = static_cast<size_t>(cfg().total_mem - used);
  if (total) *total = static_cast<size_t>(cfg().total_mem);
  return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  count(k_cuPointerGetAttribute);
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (attribute == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
    *static_cast<int*>(data) = 0;
    return CUDA_SUCCESS;
  }
  uintptr_t start = 0;
  Range r{};
  {
    std::lock_guard<std::mutex> lock(st().mu);
    const Range* found = find_range(static_cast<uintptr_t>(ptr), &start);
    if (found == nullptr) return CUDA_ERROR_INVALID_VALUE;
    r = *found;
  }
  bool on_device = r.kind == MemKind::Device || r.kind == MemKind::Managed || r.kind == MemKind::MappedDevice;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned int*>(data) = on_device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *static_cast<CUdeviceptr*>(data) = ptr; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (on_device && r.kind != MemKind::Managed) return CUDA_ERROR_INVALID_VALUE;
      *static_cast<void**>(data) = as_ptr(ptr);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *static_cast<CUdeviceptr*>(data) = start; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *static_cast<size_t*>(data) = r.size; return CUDA_SUCCESS;
    default: return CUDA_ERROR_NOT_SUPPORTED;  // not modelled by the double
  }
}

// ================================================================ streams, events
FC_ENTRY(cuStreamCreate, (CUstream* phStream, unsigned int Flags), stream_create(phStream, Flags, 0))
FC_ENTRY(cuStreamCreateWithPriority, (CUstream* phStream, unsigned int flags, int priority),
         stream_create(phStream, flags, priority))
FC_ENTRY(cuStreamDestroy, (CUstream hStream), stream_destroy(hStream))
FC_ENTRY(cuStreamDestroy_v2, (CUstream hStream), stream_destroy(hStream))
FC_ENTRY_PT(cuStreamSynchronize, cuStreamSynchronize_ptsz, (CUstream hStream),
            (sleep_until_ns(timeline_of(hStream).load()), synced(CUDA_SUCCESS)))
// Idle once its timeline is reached and the kernels before it stopped storing (as an event).
FC_ENTRY_PT(cuStreamQuery, cuStreamQuery_ptsz, (CUstream hStream),
            [&] {
              const int64_t t = timeline_of(hStream).load();
              return now_ns() >= t && writers_done_by(t) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
            }())
FC_ENTRY_PT(cuStreamGetCtx, cuStreamGetCtx_ptsz, (CUstream hStream, CUcontext* pctx),
         pctx == nullptr ? CUDA_ERROR_INVALID_VALUE
                         : (*pctx = is_special_stream(hStream) ? (t_ctx_stack.empty() ? nullptr : t_ctx_stack.back())
                                                               : hStream->ctx,
                            CUDA_SUCCESS))
FC_ENTRY_PT(cuStreamWaitEvent, cuStreamWaitEvent_ptsz, (CUstream hStream, CUevent hEvent, unsigned int Flags),
            hEvent == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS)
FC_ENTRY(cuEventCreate, (CUevent* phEvent, unsigned int Flags),
         phEvent == nullptr ? CUDA_ERROR_INVALID_VALUE : (*phEvent = new CUevent_st{Flags}, CUDA_SUCCESS))
FC_ENTRY_PT(cuEventRecord, cuEventRecord_ptsz, (CUevent hEvent, CUstream hStream), event_record(hEvent, hStream))
FC_ENTRY(cuEventSynchronize, (CUevent hEvent),
         synced(hEvent == nullptr ? CUDA_ERROR_INVALID_HANDLE
                                  : (event_wait(hEvent), CUDA_SUCCESS)))
FC_ENTRY(cuEventQuery, (CUevent hEvent),
         hEvent == nullptr                            ? CUDA_ERROR_INVALID_HANDLE
         : !event_complete(hEvent)                    ? CUDA_ERROR_NOT_READY
                                                      : CUDA_SUCCESS)
FC_ENTRY(cuEventDestroy, (CUevent hEvent), event_destroy(hEvent))
FC_ENTRY(cuEventDestroy_v2, (CUevent hEvent), event_destroy(hEvent))
FC_ENTRY(cuEventElapsedTime, (float* pMilliseconds, CUevent hStart, CUevent hEnd),
         event_elapsed(pMilliseconds, hStart, hEnd))
FC_ENTRY(cuEventElapsedTime_v2, (float* pMilliseconds, CUevent hStart, CUevent hEnd),
         event_elapsed(pMilliseconds, hStart, hEnd))

// ================================================================ copies (synchronous ones sleep the delay)
FC_ENTRY_PT(cuMemcpy, cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount),
            synced(copy_bytes(as_ptr(dst), as_ptr(src), ByteCount)))
FC_ENTRY_PT(cuMemcpyAsync, cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
            copy_bytes(as_ptr(dst), as_ptr(src), ByteCount))
FC_ENTRY_PT(cuMemcpyPeer, cuMemcpyPeer_ptds,
            (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
             size_t ByteCount),
            synced(copy_bytes(as_ptr(dstDevice), as_ptr(srcDevice), ByteCount)))
FC_ENTRY_PT(cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz,
            (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount,
             CUstream hStream),
            copy_bytes(as_ptr(dstDevice), as_ptr(srcDevice), ByteCount))
FC_ENTRY_PT(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount),
            synced(copy_bytes(as_ptr(dstDevice), srcHost, ByteCount)))
FC_ENTRY_PT(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount),
            synced(copy_bytes(dstHost, as_ptr(srcDevice), ByteCount)))
FC_ENTRY_PT(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
            synced(copy_bytes(as_ptr(dstDevice), as_ptr(srcDevice), ByteCount)))
FC_ENTRY_PT(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz,
            (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, CUstream hStream),
            copy_bytes(as_ptr(dstDevice), srcHost, ByteCount))
FC_ENTRY_PT(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz,
            (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
            copy_bytes(dstHost, as_ptr(srcDevice), ByteCount))
FC_ENTRY_PT(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz,
            (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
            copy_bytes(as_ptr(dstDevice), as_ptr(srcDevice), ByteCount))
FC_ENTRY_PT(cuMemcpy2D_v2, cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D* pCopy), synced(copy_2d(pCopy)))
FC_ENTRY_PT(cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D* pCopy), synced(copy_2d(pCopy)))
FC_ENTRY_PT(cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D* pCopy, CUstream hStream), copy_2d(pCopy))
FC_ENTRY_PT(cuMemcpy3D_v2, cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D* pCopy), synced(copy_3d(pCopy)))
FC_ENTRY_PT(cuMemcpy3DAsync_v2, cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D* pCopy, CUstream hStream), copy_3d(pCopy))
FC_ENTRY_PT(cuMemcpy3DPeer, cuMemcpy3DPeer_ptds, (const CUDA_MEMCPY3D_PEER* pCopy), synced(copy_3d(pCopy)))
FC_ENTRY_PT(cuMemcpy3DPeerAsync, cuMemcpy3DPeerAsync_ptsz, (const CUDA_MEMCPY3D_PEER* pCopy, CUstream hStream),
            copy_3d(pCopy))
FC_ENTRY_PT(cuMemcpyHtoA_v2, cuMemcpyHtoA_v2_ptds,
            (CUarray dstArray, size_t dstOffset, const void* srcHost, size_t ByteCount),
            synced(copy_to_array(dstArray, dstOffset, srcHost, ByteCount)))
FC_ENTRY_PT(cuMemcpyAtoH_v2, cuMemcpyAtoH_v2_ptds,
            (void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount),
            synced(copy_from_array(dstHost, srcArray, srcOffset, ByteCount)))
FC_ENTRY_PT(cuMemcpyDtoA_v2, cuMemcpyDtoA_v2_ptds,
            (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount),
            synced(copy_to_array(dstArray, dstOffset, as_ptr(srcDevice), ByteCount)))
FC_ENTRY_PT(cuMemcpyAtoD_v2, cuMemcpyAtoD_v2_ptds,
            (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount),
            synced(copy_from_array(as_ptr(dstDevice), srcArray, srcOffset, ByteCount)))
FC_ENTRY_PT(cuMemcpyAtoA_v2, cuMemcpyAtoA_v2_ptds,
            (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount),
            synced(srcArray == nullptr ? CUDA_ERROR_INVALID_VALUE
                                       : copy_to_array(dstArray, dstOffset, as_bytes(srcArray) + srcOffset, ByteCount)))
FC_ENTRY_PT(cuMemcpyHtoAAsync_v2, cuMemcpyHtoAAsync_v2_ptsz,
            (CUarray dstArray, size_t dstOffset, const void* srcHost, size_t ByteCount, CUstream hStream),
            copy_to_array(dstArray, dstOffset, srcHost, ByteCount))
FC_ENTRY_PT(cuMemcpyAtoHAsync_v2, cuMemcpyAtoHAsync_v2_ptsz,
            (void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream),
            copy_from_array(dstHost, srcArray, srcOffset, ByteCount))

// ================================================================ memsets (N and Width count elements)
FC_ENTRY_PT(cuMemsetD8_v2, cuMemsetD8_v2_ptds, (CUdeviceptr dstDevice, unsigned char uc, size_t N),
            synced(fill_1d(dstDevice, uc, N)))
FC_ENTRY_PT(cuMemsetD16_v2, cuMemsetD16_v2_ptds, (CUdeviceptr dstDevice, unsigned short us, size_t N),
            synced(fill_1d(dstDevice, us, N)))
FC_ENTRY_PT(cuMemsetD32_v2, cuMemsetD32_v2_ptds, (CUdeviceptr dstDevice, unsigned int ui, size_t N),
            synced(fill_1d(dstDevice, ui, N)))
FC_ENTRY_PT(cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds,
            (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height),
            synced(fill_2d(dstDevice, dstPitch, uc, Width, Height)))
FC_ENTRY_PT(cuMemsetD2D16_v2, cuMemsetD2D16_v2_ptds,
            (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height),
            synced(fill_2d(dstDevice, dstPitch, us, Width, Height)))
FC_ENTRY_PT(cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds,
            (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height),
            synced(fill_2d(dstDevice, dstPitch, ui, Width, Height)))
FC_ENTRY_PT(cuMemsetD8Async, cuMemsetD8Async_ptsz,
            (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream), fill_1d(dstDevice, uc, N))
FC_ENTRY_PT(cuMemsetD16Async, cuMemsetD16Async_ptsz,
            (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream), fill_1d(dstDevice, us, N))
FC_ENTRY_PT(cuMemsetD32Async, cuMemsetD32Async_ptsz,
            (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream), fill_1d(dstDevice, ui, N))
FC_ENTRY_PT(cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz,
            (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream),
            fill_2d(dstDevice, dstPitch, uc, Width, Height))
FC_ENTRY_PT(cuMemsetD2D16Async, cuMemsetD2D16Async_ptsz,
            (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream),
            fill_2d(dstDevice, dstPitch, us, Width, Height))
FC_ENTRY_PT(cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz,
            (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream),
            fill_2d(dstDevice, dstPitch, ui, Width, Height))

// ================================================================ launches (nothing runs)
FC_ENTRY_PT(cuLaunchKernel, cuLaunchKernel_ptsz,
            (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
             unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
             void** kernelParams, void** extra),
            launch(f, hStream, kernelParams))
FC_ENTRY_PT(cuLaunchKernelEx, cuLaunchKernelEx_ptsz,
            (const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra), launch_ex(config, f, kernelParams))
FC_ENTRY_PT(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz,
            (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
             unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
             void** kernelParams),
            launch(f, hStream, kernelParams))
FC_ENTRY_PT(cuGraphLaunch, cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream),
            hGraphExec == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS)

// ================================================================ modules, libraries (images are not parsed)
FC_ENTRY(cuModuleLoad, (CUmodule* module, const char* fname), module_from_file(module, fname))
FC_ENTRY(cuModuleLoadData, (CUmodule* module, const void* image), module_new(module, image))
FC_ENTRY(cuModuleLoadDataEx,
         (CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options, void** optionValues),
         module_new(module, image))
FC_ENTRY(cuModuleLoadFatBinary, (CUmodule* module, const void* fatCubin), module_new(module, fatCubin))

FC_EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  count(k_cuModuleUnload);
  if (hmod == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  delete hmod;
  return CUDA_SUCCESS;
}

// Any name resolves (the image is not parsed); the same name gives the same handle.
FC_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  count(k_cuModuleGetFunction);
  if (hfunc == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (hmod == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> lock(hmod->mu);
  auto& slot = hmod->functions[name];
  if (!slot) slot.reset(new CUfunc_st{name});
  *hfunc = slot.get();
  return CUDA_SUCCESS;
}

FC_ENTRY(cuLibraryLoadData,
         (CUlibrary* library, const void* code, CUjit_option* jitOptions, void** jitOptionsValues,
          unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryOptionValues,
          unsigned int numLibraryOptions),
         library_new(library, code))
FC_ENTRY(cuLibraryLoadFromFile,
         (CUlibrary* library, const char* fileName, CUjit_option* jitOptions, void** jitOptionsValues,
          unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryOptionValues,
          unsigned int numLibraryOptions),
         library_from_file(library, fileName))

FC_EXPORT CUresult CUDAAPI cuLibraryUnload(CUlibrary library) {
  count(k_cuLibraryUnload);
  if (library == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  delete library;
  return CUDA_SUCCESS;
}

// Any name resolves; the same name gives the same handle.
FC_EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  count(k_cuLibraryGetKernel);
  if (pKernel == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (library == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> lock(library->mu);
  auto& slot = library->kernels[name];
  if (!slot) slot.reset(new CUkern_st{name});
  *pKernel = slot.get();
  return CUDA_SUCCESS;
}

// ================================================================ control: kernels that take time
FC_EXPORT void fakecuda_set_kernel_ns(uint64_t ns) { g_kernel_ns.store(static_cast<int64_t>(ns)); }
FC_EXPORT uint64_t fakecuda_kernel_runs(uint64_t from, int64_t* starts, int64_t* ends, uint64_t cap) {
  const uint64_t n = g_runs_ready.load();
  uint64_t k = 0;
  for (uint64_t i = from; i < n && k < cap; ++i, ++k) starts[k] = g_runs[i].start, ends[k] = g_runs[i].end;
  return k;
}

FC_EXPORT uint64_t fakecuda_pending_write_ns(uint64_t p) {
  const int64_t now = now_ns();
  int64_t last = now;
  std::lock_guard<std::mutex> lock(g_writers_mu);
  bool any = false;
  for (const Writer& w : g_writers)
    if (p >= w.start && p < w.start + w.size) {
      any = true;
      if (w.end > last) last = w.end;
    }
  // A writer past its end that has not made its last store yet still counts (1 ns).
  return any && last == now ? 1 : static_cast<uint64_t>(last - now);
}
