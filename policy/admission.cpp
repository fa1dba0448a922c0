// admission.cpp: caps, managed-memory rules, capped memory views.
#include "policy/admission.h"

#include <pthread.h>

#include <atomic>

#include "recorder/ledger.h"
#include "recorder/oom.h"

namespace cudashim::policy {
namespace {

MemSize g_cap;
Managed g_managed = Managed::allow;
bool g_guard = true;
DeviceQueries g_q{nullptr, nullptr};
constinit std::atomic<uint64_t> g_cap_bytes[kMaxDevices]{};  // resolved caps; 0 = not yet / none
constinit std::atomic<bool> g_cap_known[kMaxDevices]{};
MemSize g_pool_max_cached, g_pool_max_block;

// Resolves a pool bound against `device`'s memory (a fraction needs the device total).
uint64_t resolve_for(const MemSize& m, int device) {
  if (m.bytes != 0 || m.fraction == 0) return m.bytes;
  const uint64_t total = g_q.total_bytes && device >= 0 && device < kMaxDevices ? g_q.total_bytes(device) : 0;
  return m.resolve(total);
}

const char* reason_text(Verdict v) {
  switch (v) {
    case Verdict::deny_cap: return "cap";
    case Verdict::deny_managed: return "managed memory denied by policy";
    case Verdict::deny_oversubscription: return "managed allocation larger than free device memory";
    default: return "driver";
  }
}

}  // namespace

void configure_admission(const Settings& s, DeviceQueries q) {
  g_cap = s.mem_cap;
  g_managed = s.managed;
  g_guard = s.managed_guard;
  g_q = q;
  g_pool_max_cached = s.pool_max_cached;
  g_pool_max_block = s.pool_max_block;
  g_pool_on.store(s.pool, std::memory_order_relaxed);
  // A forked child (a DataLoader worker) cannot use its parent's CUDA context and may
  // inherit a pool lock held by another thread (fork(2): only the calling thread is copied;
  // pthread_atfork(3)): it runs without the pool. Registered once, by a flag rather than a
  // guarded static (hygiene.guards: a guard in progress at fork() would block the child).
  static std::atomic<bool> fork_handler{false};
  if (!fork_handler.exchange(true, std::memory_order_acq_rel))
    pthread_atfork(nullptr, nullptr, [] { g_pool_on.store(false, std::memory_order_relaxed); });
  recorder::oom_configure({cap_of, q.free_bytes});
  for (int d = 0; d < kMaxDevices; ++d) {
    g_cap_bytes[d] = g_cap.bytes;
    g_cap_known[d] = g_cap.fraction == 0;
  }
}

uint64_t cap_of(int device) {
  if (!g_cap.set() || device < 0 || device >= kMaxDevices) return 0;
  if (!g_cap_known[device].load(std::memory_order_acquire)) {
    const uint64_t total = g_q.total_bytes ? g_q.total_bytes(device) : 0;
    g_cap_bytes[device].store(g_cap.resolve(total), std::memory_order_relaxed);
    g_cap_known[device].store(total != 0, std::memory_order_release);  // retry later when unknown
  }
  return g_cap_bytes[device].load(std::memory_order_relaxed);
}

Verdict admit(HookId api, MemKind kind, int device, uint64_t bytes) {
  const Verdict v = try_admit(kind, device, bytes);
  if (v != Verdict::admit)
    recorder::record_oom({api, device, bytes, recorder::ledger_capped_bytes(device), cap_of(device), true, reason_text(v)});
  return v;
}

Verdict try_admit(MemKind kind, int device, uint64_t bytes) {
  Verdict v = Verdict::admit;
  if (kind == MemKind::managed) {
    if (g_managed == Managed::deny) v = Verdict::deny_managed;
    else if (g_guard && g_q.free_bytes) {
      const uint64_t free = g_q.free_bytes(device);
      if (free != 0 && bytes > free) v = Verdict::deny_oversubscription;
    }
  }
  const uint64_t cap = cap_of(device);
  if (v == Verdict::admit && !recorder::ledger_charge(kind, device, bytes, cap)) v = Verdict::deny_cap;
  return v;
}

void uncharge(MemKind kind, int device, uint64_t charged) { recorder::ledger_uncharge(kind, device, charged); }

void commit(MemKind kind, uint64_t key, uint64_t bytes, uint64_t charged, int device) {
  if (bytes > charged) recorder::ledger_grow(kind, device, bytes - charged);
  recorder::ledger_track(kind, key, bytes, device);
}

void rollback(HookId api, MemKind kind, int device, uint64_t charged, uint64_t result) {
  recorder::ledger_uncharge(kind, device, charged);
  if (result == 2)  // CUDA_ERROR_OUT_OF_MEMORY from the driver itself
    recorder::record_oom({api, device, charged, recorder::ledger_capped_bytes(device), cap_of(device), false, "driver"});
}

void cap_mem_info(int device, size_t* free, size_t* total) {
  const uint64_t cap = cap_of(device);
  if (cap == 0) return;
  const uint64_t used = recorder::ledger_capped_bytes(device);
  const uint64_t room = used >= cap ? 0 : cap - used;
  if (total != nullptr && *total > cap) *total = cap;
  if (free != nullptr && *free > room) *free = room;
}

void cap_total_mem(int device, size_t* bytes) {
  const uint64_t cap = cap_of(device);
  if (cap != 0 && bytes != nullptr && *bytes > cap) *bytes = cap;
}

bool warn_on_managed() { return g_managed == Managed::warn; }

constinit std::atomic<bool> g_pool_on{false};

uint64_t pool_max_cached(int device) { return resolve_for(g_pool_max_cached, device); }
uint64_t pool_max_block(int device) { return resolve_for(g_pool_max_block, device); }

}  // namespace cudashim::policy
