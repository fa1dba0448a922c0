// fakecupti.cpp: a test-double libcupti.so.<major> (the major of the fake runtime): the activity
// API of one process-wide client, as CUPTI has it. Its records are the kernels the fake driver
// ran (fakecuda_kernel_runs of libcuda.so.1: each kernel that took time, FAKECUDA_KERNEL_US),
// as CONCURRENT_KERNEL records with CUPTI's layout (shim/cupti_abi.h offsets), stamped on
// CLOCK_REALTIME like CUPTI's on Linux, device 0, context 1.
//   cuptiActivityRegisterCallbacks  the last registration wins (CUPTI keeps one pair);
//   cuptiActivityEnable/Disable     CONCURRENT_KERNEL (or KERNEL) collects the kernels launched
//                                   while it is enabled; other kinds succeed and collect nothing;
//   cuptiActivityFlushAll           hands the finished kernels (every one with FLUSH_FORCED) to the
//                                   registered callbacks, in buffers those callbacks provide;
//   cuptiSubscribe                  one subscriber; a second gets MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED.
// fakecupti_calls(name) counts calls (cuptiActivityEnable, cuptiActivityRegisterCallbacks, ...).
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "../../shim/cupti_abi.h"

#define FN_EXPORT extern "C" __attribute__((visibility("default")))

namespace cupti = cudashim::cupti;

namespace {

constexpr size_t kRecordBytes = 64;  // fields at the offsets of cupti_abi.h, the rest zero
std::mutex g_mu;
cupti::BufferRequested g_requested = nullptr;
cupti::BufferCompleted g_completed = nullptr;
bool g_collecting = false;
uint64_t g_cursor = 0;  // the first kernel run not yet delivered or skipped
bool g_subscribed = false;
std::atomic<uint64_t> g_calls[8];
const char* const kCounted[] = {"cuptiActivityRegisterCallbacks", "cuptiActivityEnable", "cuptiActivityDisable",
                                "cuptiActivityFlushAll", "cuptiSubscribe", "records"};
void count(const char* name, uint64_t n = 1) {
  for (size_t i = 0; i < sizeof kCounted / sizeof kCounted[0]; ++i)
    if (std::strcmp(kCounted[i], name) == 0) g_calls[i].fetch_add(n);
}

int64_t clock_ns(clockid_t c) {
  timespec t;
  clock_gettime(c, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

using RunsFn = uint64_t (*)(uint64_t, int64_t*, int64_t*, uint64_t);
// The fake driver's log, once the runtime has loaded it (a client may enable collection first:
// no kernel has run then, and a later call looks again).
RunsFn runs_fn() {
  static std::atomic<RunsFn> fn{nullptr};
  if (RunsFn f = fn.load()) return f;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  RunsFn f = h ? reinterpret_cast<RunsFn>(dlsym(h, "fakecuda_kernel_runs")) : nullptr;
  fn.store(f);
  return f;
}

// Skips the runs so far: kernels launched before collection was enabled are not recorded.
void skip_to_now() {
  int64_t s[256], e[256];
  if (RunsFn f = runs_fn())
    for (uint64_t n; (n = f(g_cursor, s, e, 256)) > 0;) g_cursor += n;
}

void put(uint8_t* r, int64_t start_mono, int64_t end_mono, int64_t to_real) {
  std::memset(r, 0, kRecordBytes);
  const int kind = cupti::kKindConcurrentKernel;
  const uint64_t start = static_cast<uint64_t>(start_mono + to_real), end = static_cast<uint64_t>(end_mono + to_real);
  const uint32_t device = 0, context = 1;
  std::memcpy(r, &kind, sizeof kind);
  std::memcpy(r + cupti::kKernelStart, &start, 8);
  std::memcpy(r + cupti::kKernelEnd, &end, 8);
  std::memcpy(r + cupti::kKernelDevice, &device, 4);
  std::memcpy(r + cupti::kKernelContext, &context, 4);
}

// Delivers the finished runs (all with `forced`) to the registered client. Under g_mu.
void deliver(bool forced) {
  RunsFn f = runs_fn();
  if (!g_collecting || f == nullptr || g_requested == nullptr || g_completed == nullptr) return;
  const int64_t now = clock_ns(CLOCK_MONOTONIC), to_real = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
  for (;;) {
    int64_t s[512], e[512];
    const uint64_t n = f(g_cursor, s, e, 512);
    uint64_t ready = 0;
    while (ready < n && (forced || e[ready] <= now)) ++ready;
    if (ready == 0) return;
    uint8_t* buf = nullptr;
    size_t size = 0, max_records = 0;
    g_requested(&buf, &size, &max_records);
    if (buf == nullptr || size < kRecordBytes) return;  // the client refused: CUPTI drops them
    uint64_t k = 0;
    for (; k < ready && (k + 1) * kRecordBytes <= size; ++k) put(buf + k * kRecordBytes, s[k], e[k], to_real);
    g_cursor += k;
    count("records", k);
    g_completed(nullptr, 0, buf, size, k * kRecordBytes);
    if (ready < n || n < 512) return;
  }
}

}  // namespace

FN_EXPORT cupti::Result cuptiActivityRegisterCallbacks(cupti::BufferRequested requested, cupti::BufferCompleted completed) {
  count("cuptiActivityRegisterCallbacks");
  if (requested == nullptr || completed == nullptr) return 1;  // CUPTI_ERROR_INVALID_PARAMETER
  std::lock_guard<std::mutex> lock(g_mu);
  g_requested = requested, g_completed = completed;
  return cupti::kSuccess;
}

FN_EXPORT cupti::Result cuptiActivityEnable(int kind) {
  count("cuptiActivityEnable");
  std::lock_guard<std::mutex> lock(g_mu);
  if ((kind == cupti::kKindConcurrentKernel || kind == cupti::kKindKernel) && !g_collecting) {
    skip_to_now();
    g_collecting = true;
  }
  return cupti::kSuccess;
}

FN_EXPORT cupti::Result cuptiActivityEnableContext(void*, int kind) { return cuptiActivityEnable(kind); }

FN_EXPORT cupti::Result cuptiActivityDisable(int kind) {
  count("cuptiActivityDisable");
  std::lock_guard<std::mutex> lock(g_mu);
  if (kind == cupti::kKindConcurrentKernel || kind == cupti::kKindKernel) {
    deliver(true);  // what ran while enabled stays the current client's
    g_collecting = false;
  }
  return cupti::kSuccess;
}

FN_EXPORT cupti::Result cuptiActivityFlushAll(uint32_t flag) {
  count("cuptiActivityFlushAll");
  std::lock_guard<std::mutex> lock(g_mu);
  deliver((flag & cupti::kFlushForced) != 0);
  return cupti::kSuccess;
}

FN_EXPORT cupti::Result cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid_size, cupti::Activity** record) {
  uint8_t* next = *record == nullptr ? buffer : reinterpret_cast<uint8_t*>(*record) + kRecordBytes;
  if (next + kRecordBytes > buffer + valid_size) return cupti::kErrorMaxLimitReached;
  *record = reinterpret_cast<cupti::Activity*>(next);
  return cupti::kSuccess;
}

FN_EXPORT cupti::Result cuptiGetTimestamp(uint64_t* timestamp) {
  if (timestamp == nullptr) return 1;
  *timestamp = static_cast<uint64_t>(clock_ns(CLOCK_REALTIME));
  return cupti::kSuccess;
}

FN_EXPORT cupti::Result cuptiSubscribe(void** subscriber, void*, void*) {
  count("cuptiSubscribe");
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_subscribed) return cupti::kErrorMultipleSubscribers;
  g_subscribed = true;
  if (subscriber != nullptr) *subscriber = &g_subscribed;
  return cupti::kSuccess;
}

FN_EXPORT cupti::Result cuptiUnsubscribe(void*) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_subscribed = false;
  return cupti::kSuccess;
}

FN_EXPORT uint64_t fakecupti_calls(const char* name) {
  for (size_t i = 0; i < sizeof kCounted / sizeof kCounted[0]; ++i)
    if (std::strcmp(kCounted[i], name) == 0) return g_calls[i].load();
  return 0;
}
