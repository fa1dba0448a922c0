// library_log.cpp: see library_log.h.
#include "recorder/library_log.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <new>

namespace cudashim::recorder {
namespace {

constexpr size_t kRing = 64;
struct RingSlot {
  std::atomic<uint64_t> seq{0};  // 0 while being written
  char name[256];
  const void* caller;
};
constinit RingSlot g_ring[kRing];
constinit std::atomic<uint64_t> g_next{0};

constexpr size_t kCallers = 16;
constinit std::atomic<const void*> g_callers[kCallers];  // module bases
constinit std::atomic<const void*> g_caller_addr[kCallers];
constinit std::atomic<int> g_caller_version[kCallers];

constexpr size_t kKeep = 2048;
constinit std::mutex g_mutex;  // trivially destructible in libstdc++: usable during exit
std::vector<ModuleLoad>* g_loads = nullptr;  // never destroyed: module loads may come during exit
ModuleTotals g_totals;
uint64_t g_dropped = 0;

std::mutex& mu() { return g_mutex; }

}  // namespace

void log_dlopen(const char* file, const void* caller) {
  const uint64_t n = g_next.fetch_add(1, std::memory_order_relaxed) + 1;
  RingSlot& s = g_ring[n % kRing];
  s.seq.store(0, std::memory_order_release);
  if (file != nullptr) {
    std::strncpy(s.name, file, sizeof s.name - 1);
    s.name[sizeof s.name - 1] = '\0';
  } else {
    s.name[0] = '\0';
  }
  s.caller = caller;
  s.seq.store(n, std::memory_order_release);
}


std::vector<DlopenRequest> dlopen_requests() {
  std::vector<DlopenRequest> out;
  const uint64_t last = g_next.load(std::memory_order_acquire);
  const uint64_t first = last > kRing ? last - kRing + 1 : 1;
  for (uint64_t n = first; n <= last; ++n) {
    const RingSlot& s = g_ring[n % kRing];
    DlopenRequest r{};
    if (s.seq.load(std::memory_order_acquire) != n) continue;  // overwritten or being written
    std::memcpy(r.name, s.name, sizeof r.name);
    r.name[sizeof r.name - 1] = '\0';
    r.caller = s.caller;
    r.seq = n;
    if (s.seq.load(std::memory_order_acquire) != n) continue;  // torn: skip it
    out.push_back(r);
  }
  return out;
}

void log_procaddr_caller(const void* module_base, const void* caller, int cuda_version) {
  if (module_base == nullptr) return;
  for (size_t i = 0; i < kCallers; ++i) {
    const void* cur = g_callers[i].load(std::memory_order_acquire);
    if (cur == nullptr) {
      if (!g_callers[i].compare_exchange_strong(cur, module_base, std::memory_order_acq_rel)) {
        if (cur != module_base) continue;  // another module took this slot
      } else {
        g_caller_addr[i].store(caller, std::memory_order_release);
      }
    } else if (cur != module_base) {
      continue;
    }
    int v = g_caller_version[i].load(std::memory_order_relaxed);
    while (cuda_version > v && !g_caller_version[i].compare_exchange_weak(v, cuda_version, std::memory_order_relaxed)) {
    }
    return;
  }
}

std::vector<ProcAddrCaller> procaddr_callers() {
  std::vector<ProcAddrCaller> out;
  for (size_t i = 0; i < kCallers; ++i) {
    if (g_callers[i].load(std::memory_order_acquire) == nullptr) break;
    const void* c = g_caller_addr[i].load(std::memory_order_acquire);
    if (c != nullptr) out.push_back({c, g_caller_version[i].load(std::memory_order_relaxed)});
  }
  return out;
}

void log_module_load(ModuleLoad m) {
  std::lock_guard<std::mutex> lock(mu());
  g_totals.count++;
  g_totals.ns += m.dt_ns;
  g_totals.bytes += m.bytes;
  g_totals.sass_bytes += m.sass_bytes;
  g_totals.sass_bytes_for_sm += m.sass_bytes_for_sm;
  g_totals.ptx_jit_bytes += m.ptx_jit_bytes;
  if (m.result != 0) g_totals.failed++;
  if (g_loads == nullptr) g_loads = new std::vector<ModuleLoad>;
  if (g_loads->size() < kKeep)
    g_loads->push_back(std::move(m));
  else
    g_dropped++;
}

ModuleTotals module_totals() {
  std::lock_guard<std::mutex> lock(mu());
  return g_totals;
}

std::vector<ModuleLoad> module_loads(uint64_t* dropped) {
  std::lock_guard<std::mutex> lock(mu());
  if (dropped != nullptr) *dropped = g_dropped;
  return g_loads ? *g_loads : std::vector<ModuleLoad>{};
}

void library_log_reset() {
  // In a forked child only one thread exists: no lock is held by anyone else, but
  // the parent's thread may have held the mutex at fork time: make a fresh one.
  new (&g_mutex) std::mutex;
  g_loads = nullptr;
  g_totals = {};
  g_dropped = 0;
  for (auto& c : g_callers) c.store(nullptr, std::memory_order_relaxed);
  for (auto& c : g_caller_addr) c.store(nullptr, std::memory_order_relaxed);
  for (auto& v : g_caller_version) v.store(0, std::memory_order_relaxed);
}

}  // namespace cudashim::recorder
