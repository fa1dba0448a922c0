// ledger.h: the memory ledger, one behind every memory view (the capped free memory of
// cuMemGetInfo_v2 and of NVML's memory queries comes from it: policy/admission.h).
//
// Live allocations sit in a fixed-capacity lock-free hash table (address ->
// bytes, device, kind); per-device and per-kind live/peak bytes are atomics.
// Insert and erase are a few CAS operations: no lock, no allocation.
#pragma once
#include <atomic>
#include <cstdint>

#include "catalog/mem_kinds.h"

namespace cudashim::recorder {

struct KindStats {
  uint64_t live_bytes, peak_bytes, allocs, frees, live_count;
};
struct DeviceStats {
  int device;                 // ordinal, or kHostDevice for host memory
  uint64_t live_bytes;        // device-resident kinds together (device, async, vmm_device)
  uint64_t peak_bytes;        // high-water mark of live_bytes
  KindStats kinds[kMemKinds];
};

// Records a new allocation of `bytes` under `key` (an address or VMM handle):
// ledger_charge + ledger_track. Returns false when the table is full.
bool ledger_insert(MemKind kind, uint64_t key, uint64_t bytes, int device);

// Adds `bytes` of `kind` to `device`'s totals, unless that would take the device's
// capped bytes (device-resident kinds and managed) past `cap` (0 = no cap). Returns
// false, changing nothing, when the cap would be exceeded. Lock-free (a CAS loop).
bool ledger_charge(MemKind kind, int device, uint64_t bytes, uint64_t cap);

// Grows a charged allocation by `extra` bytes (a pitch wider than requested).
void ledger_grow(MemKind kind, int device, uint64_t extra);

// Takes back a charge whose allocation then failed.
void ledger_uncharge(MemKind kind, int device, uint64_t bytes);

// Remembers `key` -> (bytes, device, kind) of an allocation already charged.
// Returns false when the table is full (counted in ledger_overflows()).
bool ledger_track(MemKind kind, uint64_t key, uint64_t bytes, int device);

// Records which call site (recorder/callsites.h, opaque here) made the live
// allocation under `key`. One more probe of the table; no-op when not tracked.
void ledger_attach_site(MemKind kind, uint64_t key, const void* site);

struct LiveAllocation {
  MemKind kind;
  uint64_t bytes;
  int device;
  uint64_t born_ticks;
  const void* site;  // nullptr when call sites are off or unknown
  bool cached;       // held by cudashim's pool, freed by the program (not a leak)
};

// Visits every allocation still live (for leak reports at exit). Not for hot paths:
// it reads the whole table.
void ledger_for_each_live(void (*visit)(const LiveAllocation&, void*), void* ctx);

// Bytes charged against `device`'s cap now (device-resident kinds and managed).
uint64_t ledger_capped_bytes(int device);

// Removes the allocation under `key` of a kind freed by the same call family.
// Returns the bytes released, 0 when the key was not tracked.
uint64_t ledger_erase(MemKind kind, uint64_t key);

// `device`'s device-resident live bytes now, and (when `peak` is not null) their
// high-water mark. Two relaxed loads.
uint64_t ledger_device_live(int device, uint64_t* peak);

// Copies the stats of every device that ever held memory into `out` (at most
// `max` rows). Returns the number of rows.
int ledger_devices(DeviceStats* out, int max);

// How many inserts found no free slot, and how many frees named an unknown key.
uint64_t ledger_overflows();
uint64_t ledger_unknown_frees();

// Empties the ledger (tests, and a forked child).
void ledger_reset();

// ---- the caching pool (shim/pool.cpp). A cached block stays a live, charged ledger
// entry (the process still holds it from the driver); it is only marked cached.

// Marks the live device allocation under `key` cached (the program freed it into the
// pool) or in use again. Returns its bytes; 0 (changing nothing) when `key` is not
// tracked or already in that state. Lock-free: one probe of the table.
uint64_t ledger_set_cached(uint64_t key, bool cached);

// What the pool did on one device.
struct PoolStats {
  int device;
  uint64_t cached_bytes;       // held in cached, unused blocks now
  uint64_t peak_cached_bytes;  // high-water mark of cached_bytes
  uint64_t hits;               // allocations served from a cached block
  uint64_t misses;             // pool-sized allocations that went to the driver
  uint64_t not_ready;          // of the misses: a cached block of the size class was there, its work unfinished
  uint64_t bypassed;           // allocations or frees the pool left to the driver (too large, no context, ...)
  uint64_t released;           // cached blocks given back to the driver (bound, trims)
  uint64_t trims;              // trims after an out-of-memory (real or a cap denial)
  uint64_t fences;             // frees that recorded new completion events
};
enum class PoolCounter { hits, misses, not_ready, bypassed, released, trims, fences };

// Counts one pool event on `device` (relaxed atomics; the pool path only).
void pool_count(PoolCounter c, int device, uint64_t n = 1);

// Bytes `device` holds in cached blocks now.
uint64_t ledger_cached_bytes(int device);

// Copies the pool stats of every device the pool served into `out` (at most `max`).
int pool_stats(PoolStats* out, int max);

}  // namespace cudashim::recorder
