// ledger.cpp: lock-free open-addressing table of live allocations.
#include "recorder/ledger.h"

#include "recorder/clock.h"

#include <cstring>

namespace cudashim::recorder {
namespace {

// Keys carry their address space in the top bits: a device pointer, a host
// pointer and a VMM handle may hold the same number.
enum Space : uint64_t { kDeviceVA = 1, kHostVA = 2, kVmmHandle = 3, kIpcVA = 4 };

constexpr uint64_t space_of(MemKind k) {
  switch (k) {
    case MemKind::device:
    case MemKind::managed:
    case MemKind::async: return kDeviceVA;  // cuMemFree and cuMemFreeAsync free any of them
    case MemKind::host_pinned:
    case MemKind::host_registered: return kHostVA;
    case MemKind::vmm_device:
    case MemKind::vmm_host: return kVmmHandle;
    case MemKind::ipc: return kIpcVA;
    default: return 0;
  }
}

constexpr uint64_t kEmpty = 0;
constexpr uint64_t kTombstone = ~0ull;
constexpr size_t kCapacity = size_t{1} << 19;  // 512 Ki live allocations, 12 MiB of BSS

// Every member has an initializer, and the tables below are constinit: they are
// plain zeroed .bss, never a start-up loop. (A dynamic initializer here touched all
// 12 MiB at load: +14 ms on /bin/true under the shim, seen on the GPU host.)
struct Entry {
  std::atomic<uint64_t> key{0};
  uint64_t bytes = 0;
  int32_t device = 0;
  uint8_t kind = 0;
  std::atomic<bool> cached{false};  // in cudashim's pool (shim/pool.cpp); sits in the padding after kind
  uint64_t born_ticks = 0;     // when it was allocated (hook clock)
  const void* site = nullptr;  // the call site that allocated it (recorder/callsites.h)
};
constinit Entry g_table[kCapacity];

struct AtomicKind {
  std::atomic<uint64_t> live, peak, allocs, frees, count;
};
struct AtomicDevice {
  std::atomic<uint64_t> live, peak;
  std::atomic<uint64_t> capped;  // device-resident kinds and managed: what a cap limits
  std::atomic<bool> used;
  AtomicKind kinds[kMemKinds];
};
constinit AtomicDevice g_devices[kMaxDevices + 1];  // last row: host memory
constinit std::atomic<uint64_t> g_overflows{0}, g_unknown_frees{0};

struct AtomicPool {
  std::atomic<uint64_t> cached, peak_cached;
  std::atomic<uint64_t> counters[7];  // PoolCounter
  std::atomic<bool> used;
};
constinit AtomicPool g_pool[kMaxDevices + 1];

AtomicPool& pool_row(int device) { return g_pool[device < 0 || device >= kMaxDevices ? kMaxDevices : device]; }

uint64_t make_key(MemKind kind, uint64_t addr) { return (space_of(kind) << 58) | (addr & ((1ull << 58) - 1)); }

size_t bucket_of(uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return static_cast<size_t>(key) & (kCapacity - 1);
}

void raise_peak(std::atomic<uint64_t>& peak, uint64_t v) {
  uint64_t p = peak.load(std::memory_order_relaxed);
  while (v > p && !peak.compare_exchange_weak(p, v, std::memory_order_relaxed)) {
  }
}

AtomicDevice& row_of(int device) {
  if (device < 0 || device >= kMaxDevices) return g_devices[kMaxDevices];
  return g_devices[device];
}

constexpr bool counts_against_cap(MemKind k) { return is_device_resident(k) || k == MemKind::managed; }

void account(MemKind kind, int device, uint64_t bytes, bool add) {
  AtomicDevice& d = row_of(device);
  d.used.store(true, std::memory_order_relaxed);
  AtomicKind& k = d.kinds[static_cast<int>(kind)];
  if (add) {
    raise_peak(k.peak, k.live.fetch_add(bytes, std::memory_order_relaxed) + bytes);
    k.allocs.fetch_add(1, std::memory_order_relaxed);
    k.count.fetch_add(1, std::memory_order_relaxed);
    if (is_device_resident(kind)) raise_peak(d.peak, d.live.fetch_add(bytes, std::memory_order_relaxed) + bytes);
  } else {
    k.live.fetch_sub(bytes, std::memory_order_relaxed);
    k.frees.fetch_add(1, std::memory_order_relaxed);
    k.count.fetch_sub(1, std::memory_order_relaxed);
    if (is_device_resident(kind)) d.live.fetch_sub(bytes, std::memory_order_relaxed);
    if (counts_against_cap(kind)) d.capped.fetch_sub(bytes, std::memory_order_relaxed);
  }
}

}  // namespace

bool ledger_charge(MemKind kind, int device, uint64_t bytes, uint64_t cap) {
  AtomicDevice& d = row_of(device);
  if (counts_against_cap(kind)) {
    uint64_t cur = d.capped.load(std::memory_order_relaxed);
    do {
      if (cap != 0 && cur + bytes > cap) return false;
    } while (!d.capped.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  }
  account(kind, device, bytes, true);
  return true;
}

void ledger_grow(MemKind kind, int device, uint64_t extra) {
  AtomicDevice& d = row_of(device);
  AtomicKind& k = d.kinds[static_cast<int>(kind)];
  raise_peak(k.peak, k.live.fetch_add(extra, std::memory_order_relaxed) + extra);
  if (is_device_resident(kind)) raise_peak(d.peak, d.live.fetch_add(extra, std::memory_order_relaxed) + extra);
  if (counts_against_cap(kind)) d.capped.fetch_add(extra, std::memory_order_relaxed);
}

void ledger_uncharge(MemKind kind, int device, uint64_t bytes) {
  account(kind, device, bytes, false);
  AtomicKind& k = row_of(device).kinds[static_cast<int>(kind)];
  k.allocs.fetch_sub(1, std::memory_order_relaxed);  // it never happened
  k.frees.fetch_sub(1, std::memory_order_relaxed);
}

uint64_t ledger_capped_bytes(int device) { return row_of(device).capped.load(std::memory_order_relaxed); }

bool ledger_track(MemKind kind, uint64_t addr, uint64_t bytes, int device) {
  if (addr == 0) return false;
  const uint64_t key = make_key(kind, addr);
  size_t b = bucket_of(key);
  // Linear probing; a slot is claimed by CAS from empty or tombstone. The same live
  // key is never inserted twice (the driver does not hand out a live address twice).
  for (size_t probe = 0; probe < 4096; ++probe, b = (b + 1) & (kCapacity - 1)) {
    uint64_t cur = g_table[b].key.load(std::memory_order_relaxed);
    if (cur != kEmpty && cur != kTombstone) continue;
    if (!g_table[b].key.compare_exchange_strong(cur, key, std::memory_order_acq_rel)) continue;
    g_table[b].bytes = bytes;
    g_table[b].device = device;
    g_table[b].kind = static_cast<uint8_t>(kind);
    g_table[b].born_ticks = now_ticks();
    g_table[b].site = nullptr;
    g_table[b].cached.store(false, std::memory_order_relaxed);
    return true;
  }
  g_overflows.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void ledger_attach_site(MemKind kind, uint64_t addr, const void* site) {
  const uint64_t key = make_key(kind, addr);
  size_t b = bucket_of(key);
  for (size_t probe = 0; probe < 4096; ++probe, b = (b + 1) & (kCapacity - 1)) {
    const uint64_t cur = g_table[b].key.load(std::memory_order_acquire);
    if (cur == kEmpty) return;
    if (cur == key) {
      g_table[b].site = site;
      return;
    }
  }
}

void ledger_for_each_live(void (*visit)(const LiveAllocation&, void*), void* ctx) {
  for (const Entry& e : g_table) {
    const uint64_t k = e.key.load(std::memory_order_acquire);
    if (k == kEmpty || k == kTombstone) continue;
    visit({static_cast<MemKind>(e.kind), e.bytes, e.device, e.born_ticks, e.site, e.cached.load(std::memory_order_relaxed)},
          ctx);
  }
}

bool ledger_insert(MemKind kind, uint64_t addr, uint64_t bytes, int device) {
  if (addr == 0) return false;
  ledger_charge(kind, device, bytes, 0);
  return ledger_track(kind, addr, bytes, device);
}

uint64_t ledger_erase(MemKind kind, uint64_t addr) {
  if (addr == 0) return 0;
  const uint64_t key = make_key(kind, addr);
  size_t b = bucket_of(key);
  for (size_t probe = 0; probe < 4096; ++probe, b = (b + 1) & (kCapacity - 1)) {
    uint64_t cur = g_table[b].key.load(std::memory_order_acquire);
    if (cur == kEmpty) break;
    if (cur != key) continue;
    const uint64_t bytes = g_table[b].bytes;
    const int device = g_table[b].device;
    const auto real_kind = static_cast<MemKind>(g_table[b].kind);
    if (!g_table[b].key.compare_exchange_strong(cur, kTombstone, std::memory_order_acq_rel)) break;
    if (g_table[b].cached.exchange(false, std::memory_order_relaxed))
      pool_row(device).cached.fetch_sub(bytes, std::memory_order_relaxed);
    account(real_kind, device, bytes, false);
    return bytes;
  }
  g_unknown_frees.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

uint64_t ledger_device_live(int device, uint64_t* peak) {
  if (device < 0 || device >= kMaxDevices) return 0;
  const AtomicDevice& a = g_devices[device];
  if (peak != nullptr) *peak = a.peak.load(std::memory_order_relaxed);
  return a.live.load(std::memory_order_relaxed);
}

int ledger_devices(DeviceStats* out, int max) {
  int n = 0;
  for (int d = 0; d <= kMaxDevices && n < max; ++d) {
    const AtomicDevice& a = g_devices[d];
    if (!a.used.load(std::memory_order_relaxed)) continue;
    DeviceStats& s = out[n++];
    s.device = d == kMaxDevices ? kHostDevice : d;
    s.live_bytes = a.live.load(std::memory_order_relaxed);
    s.peak_bytes = a.peak.load(std::memory_order_relaxed);
    for (int k = 0; k < kMemKinds; ++k) {
      s.kinds[k] = {a.kinds[k].live.load(std::memory_order_relaxed), a.kinds[k].peak.load(std::memory_order_relaxed),
                    a.kinds[k].allocs.load(std::memory_order_relaxed), a.kinds[k].frees.load(std::memory_order_relaxed),
                    a.kinds[k].count.load(std::memory_order_relaxed)};
    }
  }
  return n;
}

uint64_t ledger_overflows() { return g_overflows.load(std::memory_order_relaxed); }
uint64_t ledger_unknown_frees() { return g_unknown_frees.load(std::memory_order_relaxed); }

void ledger_reset() {
  // Only slots that were ever written: untouched BSS pages stay untouched (a forked
  // DataLoader worker must not copy 12 MiB of zero pages).
  for (auto& e : g_table)
    if (e.key.load(std::memory_order_relaxed) != kEmpty) e.key.store(kEmpty, std::memory_order_relaxed);
  for (auto& d : g_devices) {
    d.live = 0;
    d.peak = 0;
    d.capped = 0;
    d.used = false;
    for (auto& k : d.kinds) k.live = k.peak = k.allocs = k.frees = k.count = 0;
  }
  g_overflows = 0;
  g_unknown_frees = 0;
  for (auto& p : g_pool) {
    p.cached = 0;
    p.peak_cached = 0;
    for (auto& c : p.counters) c = 0;
    p.used = false;
  }
}

uint64_t ledger_set_cached(uint64_t addr, bool cached) {
  if (addr == 0) return 0;
  const uint64_t key = make_key(MemKind::device, addr);
  size_t b = bucket_of(key);
  for (size_t probe = 0; probe < 4096; ++probe, b = (b + 1) & (kCapacity - 1)) {
    const uint64_t cur = g_table[b].key.load(std::memory_order_acquire);
    if (cur == kEmpty) return 0;
    if (cur != key) continue;
    if (g_table[b].cached.exchange(cached, std::memory_order_relaxed) == cached) return 0;
    const uint64_t bytes = g_table[b].bytes;
    AtomicPool& p = pool_row(g_table[b].device);
    p.used.store(true, std::memory_order_relaxed);
    if (cached)
      raise_peak(p.peak_cached, p.cached.fetch_add(bytes, std::memory_order_relaxed) + bytes);
    else
      p.cached.fetch_sub(bytes, std::memory_order_relaxed);
    return bytes;
  }
  return 0;
}

void pool_count(PoolCounter c, int device, uint64_t n) {
  AtomicPool& p = pool_row(device);
  p.used.store(true, std::memory_order_relaxed);
  p.counters[static_cast<int>(c)].fetch_add(n, std::memory_order_relaxed);
}

uint64_t ledger_cached_bytes(int device) { return pool_row(device).cached.load(std::memory_order_relaxed); }

int pool_stats(PoolStats* out, int max) {
  int n = 0;
  for (int d = 0; d < kMaxDevices && n < max; ++d) {
    const AtomicPool& p = g_pool[d];
    if (!p.used.load(std::memory_order_relaxed)) continue;
    auto c = [&](PoolCounter k) { return p.counters[static_cast<int>(k)].load(std::memory_order_relaxed); };
    out[n++] = {d,
                p.cached.load(std::memory_order_relaxed),
                p.peak_cached.load(std::memory_order_relaxed),
                c(PoolCounter::hits),
                c(PoolCounter::misses),
                c(PoolCounter::not_ready),
                c(PoolCounter::bypassed),
                c(PoolCounter::released),
                c(PoolCounter::trims),
                c(PoolCounter::fences)};
  }
  return n;
}

}  // namespace cudashim::recorder
