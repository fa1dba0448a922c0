// pool.cpp: the caching pool's mechanism (the decisions and bounds are policy/admission's).
//
// Pieces:
//   stream table  every stream the shim saw (created, or first launched on): blocking or
//                 not, its context, and a "got work since the last fence" flag.
//   fences        one set of completion events recorded at a free: on CU_STREAM_LEGACY (it
//                 waits for every blocking stream of the context first, the per-thread
//                 default streams included: CUDA driver API, "Stream synchronization
//                 behavior") plus one per non-blocking stream that got work since, or whose
//                 event in an older fence it has not yet seen complete (cuStreamQuery), so
//                 that the newest fence covers every unfinished stream. Frees with no
//                 stream work in between (the epoch in pool.h) share the newest fence.
//   bins          per context, per size class (4 per power of two), FIFO of cached blocks
//                 with their fence; a block is reused once its fence has completed.
//   block table   every block the pool allocated: its context, class and state.
// Cached blocks stay charged in the ledger (the process holds them); the ledger marks
// them cached so they are reported apart and never as leaks.
#include "shim/pool.h"

#include <deque>
#include <mutex>
#include <vector>

#include "recorder/clock.h"
#include "recorder/ledger.h"
#include "recorder/recorder.h"
#include "shim/log.h"
#include "shim/oom_notice.h"
#include "shim/admission_scope.h"
#include "shim/resolve.h"
#include "shim/thread_flags.h"

namespace cudashim::shim {

constinit std::atomic<uint64_t> g_pool_epoch{0};
constinit std::atomic<bool> g_pool_all_streams_dirty{false};

namespace {

namespace rec = cudashim::recorder;

// ---------------------------------------------------------------- driver functions we do not hook
template <class Fn>
Fn driver_fn(std::atomic<Fn>& slot, const char* name) {
  Fn f = slot.load(std::memory_order_acquire);
  if (f == nullptr) {
    f = reinterpret_cast<Fn>(driver_function(name));
    slot.store(f, std::memory_order_release);
  }
  return f;
}
// The legacy-stream ABIs (not _ptsz): the stream is always named explicitly.
using CtxGetCurrentFn = CUresult(CUDAAPI*)(CUcontext*);
using CtxGetDeviceFn = CUresult(CUDAAPI*)(CUdevice*);
using EventCreateFn = CUresult(CUDAAPI*)(CUevent*, unsigned int);
using EventRecordFn = CUresult(CUDAAPI*)(CUevent, CUstream);
using StreamGetCtxFn = CUresult(CUDAAPI*)(CUstream, CUcontext*);
constinit std::atomic<CtxGetCurrentFn> g_ctx_get_current{nullptr};
constinit std::atomic<CtxGetDeviceFn> g_ctx_get_device{nullptr};
constinit std::atomic<EventCreateFn> g_event_create{nullptr};
constinit std::atomic<EventRecordFn> g_event_record{nullptr};
constinit std::atomic<StreamGetCtxFn> g_stream_get_ctx{nullptr};

CUcontext current_ctx() {
  auto f = driver_fn(g_ctx_get_current, "cuCtxGetCurrent");
  CUcontext c = nullptr;
  return f != nullptr && f(&c) == CUDA_SUCCESS ? c : nullptr;
}

CUresult event_query(CUevent e) {
  auto f = reinterpret_cast<PFN_cuEventQuery_v2000>(real_of(HookId::cuEventQuery));
  return f ? f(e) : CUDA_ERROR_NOT_FOUND;
}
CUresult event_sync(CUevent e) {
  auto f = reinterpret_cast<PFN_cuEventSynchronize_v2000>(real_of(HookId::cuEventSynchronize));
  return f ? f(e) : CUDA_ERROR_NOT_FOUND;
}
CUresult stream_query(CUstream s) {
  auto f = reinterpret_cast<PFN_cuStreamQuery_v2000>(real_of(HookId::cuStreamQuery));
  return f ? f(s) : CUDA_ERROR_NOT_FOUND;
}
CUresult ctx_sync() {
  auto f = reinterpret_cast<PFN_cuCtxSynchronize_v2000>(real_of(HookId::cuCtxSynchronize));
  return f ? f() : CUDA_ERROR_NOT_FOUND;
}

// ---------------------------------------------------------------- size classes
// 512 B, then 4 classes per power of two: 640, 768, 896, 1024, 1280, ... A request is
// rounded up to its class (at most 25 % more), so any block of the class fits it.
constexpr int kClasses = 128;
int class_of(uint64_t bytes) {
  if (bytes <= 512) return 0;
  const int p = 63 - __builtin_clzll(bytes - 1);  // 2^p < bytes <= 2^(p+1)
  const uint64_t step = 1ull << (p - 2);
  const uint64_t idx = (bytes - (1ull << p) + step - 1) / step;  // 1..4
  return (p - 9) * 4 + static_cast<int>(idx);
}
uint64_t class_bytes(int cls) {
  if (cls == 0) return 512;
  const int p = (cls - 1) / 4 + 9;
  const uint64_t idx = static_cast<uint64_t>((cls - 1) % 4 + 1);
  return (1ull << p) + idx * (1ull << (p - 2));
}

// ---------------------------------------------------------------- per context
struct CtxState;

struct Fence {
  static constexpr int kMaxEvents = 16;
  std::atomic<int> refs{1};
  std::atomic<bool> done{false};
  CtxState* cs = nullptr;
  int n = 0;
  CUevent ev[kMaxEvents] = {};
  uint64_t orphan_hi = 0;  // orphan events (destroyed streams) up to this sequence must complete too
};

struct Orphan {
  CUevent ev;
  uint64_t seq;
};

struct Block {
  CUdeviceptr ptr;
  Fence* fence;
};

struct Bin {
  std::mutex mu;
  std::deque<Block> blocks;  // oldest first
};

struct CtxState {
  CUcontext ctx = nullptr;
  int device = 0;
  uint64_t max_cached = 0, max_block = 0;
  std::mutex mu;  // fences, spare events, orphans. Order: a bin's lock, then mu.
  Fence* last = nullptr;
  uint64_t last_gen = 0;
  std::vector<CUevent> spare;
  std::vector<Orphan> orphans;
  std::atomic<size_t> orphan_count{0};
  uint64_t orphan_seq = 0;
  Bin bins[kClasses];
};

constexpr int kMaxContexts = 64;
struct CtxSlot {
  std::atomic<CUcontext> ctx{nullptr};
  std::atomic<CtxState*> state{nullptr};
};
constinit CtxSlot g_ctxs[kMaxContexts];
std::mutex g_ctx_mu;

// Cached bytes reserved per device: the bound is checked and taken in one CAS.
constinit std::atomic<uint64_t> g_reserved[kMaxDevices]{};

bool reserve_cached(int device, uint64_t bytes, uint64_t bound) {
  std::atomic<uint64_t>& r = g_reserved[device];
  uint64_t cur = r.load(std::memory_order_relaxed);
  do {
    if (cur + bytes > bound) return false;
  } while (!r.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  return true;
}
void unreserve_cached(int device, uint64_t bytes) { g_reserved[device].fetch_sub(bytes, std::memory_order_relaxed); }

// Returns the state of `ctx`, creating it; nullptr when the table is full.
CtxState* ctx_state(CUcontext ctx) {
  for (auto& s : g_ctxs)
    if (s.ctx.load(std::memory_order_acquire) == ctx) return s.state.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(g_ctx_mu);
  for (auto& s : g_ctxs)
    if (s.ctx.load(std::memory_order_relaxed) == ctx) return s.state.load(std::memory_order_relaxed);
  for (auto& s : g_ctxs) {
    if (s.ctx.load(std::memory_order_relaxed) != nullptr) continue;
    auto* cs = new CtxState;
    cs->ctx = ctx;
    CUdevice d = 0;
    auto get_dev = driver_fn(g_ctx_get_device, "cuCtxGetDevice");
    cs->device = get_dev != nullptr && get_dev(&d) == CUDA_SUCCESS && d >= 0 && d < kMaxDevices ? d : 0;
    cs->max_cached = policy::pool_max_cached(cs->device);
    cs->max_block = policy::pool_max_block(cs->device);
    s.state.store(cs, std::memory_order_release);
    s.ctx.store(ctx, std::memory_order_release);
    return cs;
  }
  return nullptr;
}

// ---------------------------------------------------------------- streams
enum StreamKind : uint8_t { kNone = 0, kBlocking = 1, kNonBlocking = 2, kDead = 3 };
constexpr size_t kStreamSlots = 1024;
struct StreamSlot {
  std::atomic<CUstream> stream{nullptr};
  std::atomic<uint8_t> kind{kNone};
  std::atomic<bool> dirty{false};  // work noted since a fence last looked at the stream
  // An event was recorded on it and the stream was not seen idle since: a newer fence must
  // record on it again (sharing only the newest fence, it must cover every unfinished stream;
  // an older fence's event is not waited for). Read and written under g_stream_mu.
  bool busy = false;
  std::atomic<CUcontext> ctx{nullptr};
};
constinit StreamSlot g_streams[kStreamSlots];
std::mutex g_stream_mu;  // insertions and the list below; lookups take no lock
// Slots of the live non-blocking (or unknown) streams, for fences; under g_stream_mu.
std::vector<size_t>* g_nb_list = nullptr;
// A stream the table had no room for got work: fences then synchronize the context.
constinit std::atomic<bool> g_untracked_work{false};

size_t stream_bucket(CUstream s) {
  uint64_t k = reinterpret_cast<uintptr_t>(s);
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return static_cast<size_t>(k) & (kStreamSlots - 1);
}

// Returns the slot of `s`, nullptr when absent. Lock-free.
StreamSlot* find_stream(CUstream s) {
  size_t b = stream_bucket(s);
  for (size_t i = 0; i < kStreamSlots; ++i, b = (b + 1) & (kStreamSlots - 1)) {
    const CUstream cur = g_streams[b].stream.load(std::memory_order_acquire);
    if (cur == s) return &g_streams[b];
    if (cur == nullptr) return nullptr;
  }
  return nullptr;
}

// Registers `s` (replacing a dead entry of the same handle). pre: g_stream_mu held.
StreamSlot* register_stream_locked(CUstream s, uint8_t kind, CUcontext ctx) {
  if (g_nb_list == nullptr) g_nb_list = new std::vector<size_t>;
  StreamSlot* slot = find_stream(s);
  if (slot == nullptr) {
    size_t b = stream_bucket(s);
    for (size_t i = 0; i < kStreamSlots && slot == nullptr; ++i, b = (b + 1) & (kStreamSlots - 1)) {
      const CUstream cur = g_streams[b].stream.load(std::memory_order_relaxed);
      if (cur == nullptr || g_streams[b].kind.load(std::memory_order_relaxed) == kDead) slot = &g_streams[b];
    }
    if (slot == nullptr) return nullptr;
  }
  slot->kind.store(kNone, std::memory_order_relaxed);
  slot->ctx.store(ctx, std::memory_order_relaxed);
  slot->dirty.store(false, std::memory_order_relaxed);
  slot->busy = false;
  slot->stream.store(s, std::memory_order_release);
  slot->kind.store(kind, std::memory_order_release);
  const size_t idx = static_cast<size_t>(slot - g_streams);
  std::erase(*g_nb_list, idx);
  if (kind == kNonBlocking) g_nb_list->push_back(idx);
  return slot;
}

bool stream_busy(StreamSlot* s) {
  std::lock_guard<std::mutex> lock(g_stream_mu);
  return s->busy;
}

void register_stream(CUstream s, unsigned flags) {
  if (s == nullptr) return;
  const CUcontext ctx = current_ctx();
  std::lock_guard<std::mutex> lock(g_stream_mu);
  if (register_stream_locked(s, (flags & CU_STREAM_NON_BLOCKING) ? kNonBlocking : kBlocking, ctx) == nullptr)
    log_message(LogLevel::debug, "pool: stream table full; work on new streams synchronizes at the next free");
}

// ---------------------------------------------------------------- fences
CUevent take_event(CtxState* cs) {  // pre: cs->mu held
  if (!cs->spare.empty()) {
    CUevent e = cs->spare.back();
    cs->spare.pop_back();
    return e;
  }
  auto create = driver_fn(g_event_create, "cuEventCreate");
  CUevent e = nullptr;
  if (create == nullptr || create(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) return nullptr;
  return e;
}

void fence_unref(Fence* f) {
  if (f == nullptr || f->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  {
    std::lock_guard<std::mutex> lock(f->cs->mu);
    for (int i = 0; i < f->n; ++i) f->cs->spare.push_back(f->ev[i]);
  }
  delete f;
}

// True when every orphan event up to `hi` completed (completed ones are retired).
bool orphans_done(CtxState* cs, uint64_t hi) {
  if (cs->orphan_count.load(std::memory_order_acquire) == 0) return true;
  std::lock_guard<std::mutex> lock(cs->mu);
  bool all = true;
  for (size_t i = 0; i < cs->orphans.size();) {
    Orphan& o = cs->orphans[i];
    const CUresult r = event_query(o.ev);
    if (r == CUDA_SUCCESS) {
      cs->spare.push_back(o.ev);
      cs->orphans.erase(cs->orphans.begin() + static_cast<long>(i));
      continue;
    }
    if (o.seq <= hi) all = false;
    ++i;
  }
  cs->orphan_count.store(cs->orphans.size(), std::memory_order_release);
  return all;
}

// True when the device finished all work the fence covers. Remembers completion, so a
// fence is queried until it completes and never after.
bool fence_done(Fence* f) {
  if (f->done.load(std::memory_order_acquire)) return true;
  for (int i = 0; i < f->n; ++i)
    if (event_query(f->ev[i]) != CUDA_SUCCESS) return false;  // not ready, or an error: not reusable
  if (!orphans_done(f->cs, f->orphan_hi)) return false;
  f->done.store(true, std::memory_order_release);
  return true;
}

// Waits until the fence completed (trims). Returns false on a driver error.
bool fence_wait(Fence* f) {
  if (f->done.load(std::memory_order_acquire)) return true;
  for (int i = 0; i < f->n; ++i)
    if (event_sync(f->ev[i]) != CUDA_SUCCESS) return false;
  if (f->cs->orphan_count.load(std::memory_order_acquire) != 0) {
    std::lock_guard<std::mutex> lock(f->cs->mu);
    for (const Orphan& o : f->cs->orphans)
      if (o.seq <= f->orphan_hi && event_sync(o.ev) != CUDA_SUCCESS) return false;
  }
  f->done.store(true, std::memory_order_release);
  return true;
}

// The fence for a free now in `cs` (a reference for the caller); nullptr when events
// could not be recorded (the caller frees for real). pre: cs is the current context.
Fence* fence_for_free(CtxState* cs) {
  std::lock_guard<std::mutex> lock(cs->mu);
  // Close the epoch (odd: work since the last fence) in one step; the new even epoch names
  // the fence made now. A launch that marked the epoch before this step has marked its
  // stream before it too (pool.h): the scan below sees it.
  uint64_t gen = g_pool_epoch.load(std::memory_order_acquire);
  while ((gen & 1) && !g_pool_epoch.compare_exchange_weak(gen, gen + 1, std::memory_order_acq_rel)) {
  }
  if (gen & 1) ++gen;
  const bool own_work = g_flags.pool_work;  // this thread's launches since its last free (pool.h)
  g_flags.pool_work = false;
  if (!own_work && cs->last != nullptr && cs->last_gen == gen) {
    cs->last->refs.fetch_add(1, std::memory_order_relaxed);
    return cs->last;
  }
  auto record = driver_fn(g_event_record, "cuEventRecord");
  if (record == nullptr) return nullptr;
  auto* f = new Fence;
  f->cs = cs;
  f->refs.store(2, std::memory_order_relaxed);  // the caller's block, and cs->last
  bool sync_instead = g_untracked_work.exchange(false, std::memory_order_acq_rel);
  CUevent legacy = take_event(cs);
  if (legacy == nullptr || record(legacy, CU_STREAM_LEGACY) != CUDA_SUCCESS) {
    if (legacy != nullptr) cs->spare.push_back(legacy);
    delete f;
    return nullptr;
  }
  f->ev[f->n++] = legacy;
  {
    std::lock_guard<std::mutex> slock(g_stream_mu);
    const bool all = g_pool_all_streams_dirty.exchange(false, std::memory_order_acq_rel);
    if (g_nb_list != nullptr) {
      for (size_t idx : *g_nb_list) {
        StreamSlot& s = g_streams[idx];
        if (all) s.dirty.store(true, std::memory_order_relaxed);
        const CUcontext sc = s.ctx.load(std::memory_order_relaxed);
        if (sc != nullptr && sc != cs->ctx) continue;  // another context's stream: its own fences
        const bool dirty = s.dirty.exchange(false, std::memory_order_acq_rel);
        if (!dirty && !s.busy) continue;
        const CUstream stream = s.stream.load(std::memory_order_relaxed);
        // No new work, and the work an older fence recorded is done: nothing to wait for.
        if (!dirty && stream_query(stream) == CUDA_SUCCESS) {
          s.busy = false;
          continue;
        }
        CUevent e = f->n < Fence::kMaxEvents ? take_event(cs) : nullptr;
        if (e == nullptr || record(e, stream) != CUDA_SUCCESS) {
          if (e != nullptr) cs->spare.push_back(e);
          sync_instead = true;  // too many streams, or one we cannot record on: wait now instead
          continue;
        }
        s.busy = true;
        f->ev[f->n++] = e;
      }
    }
  }
  f->orphan_hi = cs->orphan_seq;
  if (sync_instead) {
    if (ctx_sync() != CUDA_SUCCESS) {
      for (int i = 0; i < f->n; ++i) cs->spare.push_back(f->ev[i]);
      delete f;
      return nullptr;
    }
    f->done.store(true, std::memory_order_release);
  }
  Fence* old = cs->last;
  cs->last = f;
  cs->last_gen = gen;
  rec::pool_count(rec::PoolCounter::fences, cs->device);
  if (old != nullptr && old->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    for (int i = 0; i < old->n; ++i) cs->spare.push_back(old->ev[i]);  // mu already held
    delete old;
  }
  return f;
}

// ---------------------------------------------------------------- block table
enum BlockState : uint8_t { kLive = 1, kCached = 2 };
constexpr size_t kBlockSlots = size_t{1} << 16;
constexpr uint64_t kTomb = ~0ull;
struct BlockSlot {
  std::atomic<uint64_t> key{0};
  CtxState* cs = nullptr;
  int cls = 0;
  std::atomic<uint8_t> state{0};
};
constinit BlockSlot g_blocks[kBlockSlots];

size_t block_bucket(uint64_t k) {
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return static_cast<size_t>(k) & (kBlockSlots - 1);
}
BlockSlot* find_block(uint64_t p) {
  size_t b = block_bucket(p);
  for (size_t i = 0; i < 512; ++i, b = (b + 1) & (kBlockSlots - 1)) {
    const uint64_t cur = g_blocks[b].key.load(std::memory_order_acquire);
    if (cur == p) return &g_blocks[b];
    if (cur == 0) return nullptr;
  }
  return nullptr;
}
BlockSlot* insert_block(uint64_t p, CtxState* cs, int cls) {
  if (BlockSlot* old = find_block(p)) {  // a stale entry of an address freed by another path
    old->cs = cs;
    old->cls = cls;
    old->state.store(kLive, std::memory_order_release);
    return old;
  }
  size_t b = block_bucket(p);
  for (size_t i = 0; i < 512; ++i, b = (b + 1) & (kBlockSlots - 1)) {
    uint64_t cur = g_blocks[b].key.load(std::memory_order_relaxed);
    if (cur != 0 && cur != kTomb) continue;
    if (!g_blocks[b].key.compare_exchange_strong(cur, p, std::memory_order_acq_rel)) continue;
    g_blocks[b].cs = cs;
    g_blocks[b].cls = cls;
    g_blocks[b].state.store(kLive, std::memory_order_release);
    return &g_blocks[b];
  }
  return nullptr;
}
void erase_block(BlockSlot* s) {
  s->state.store(0, std::memory_order_relaxed);
  s->key.store(kTomb, std::memory_order_release);
}

// ---------------------------------------------------------------- real allocation and release
// Frees a block for real: the ledger first (the address cannot be reused in between).
CUresult release_to_driver(CUdeviceptr p) {
  rec::record_free(MemKind::device, p);
  auto f = reinterpret_cast<PFN_cuMemFree_v3020>(real_of(HookId::cuMemFree_v2));
  return f ? f(p) : CUDA_ERROR_NOT_FOUND;
}

// Gives cached blocks of `device` back to the driver, oldest first in each class:
// all of them when `wait` (after an out-of-memory; unfinished work is waited for), else
// only those whose work is done, until `want` bytes were released. Returns the bytes.
uint64_t release_cached(int device, uint64_t want, bool wait) {
  uint64_t released = 0, n = 0;
  for (auto& slot : g_ctxs) {
    CtxState* cs = slot.state.load(std::memory_order_acquire);
    if (cs == nullptr || cs->device != device) continue;
    for (int c = kClasses - 1; c >= 0 && released < want; --c) {
      Bin& bin = cs->bins[c];
      std::vector<Block> out;
      {
        std::lock_guard<std::mutex> lock(bin.mu);
        for (auto it = bin.blocks.begin(); it != bin.blocks.end() && released < want;) {
          if (!(wait ? fence_wait(it->fence) : fence_done(it->fence))) {
            ++it;
            continue;
          }
          out.push_back(*it);
          released += class_bytes(c);
          it = bin.blocks.erase(it);
        }
      }
      for (const Block& b : out) {
        if (BlockSlot* s = find_block(b.ptr)) erase_block(s);
        fence_unref(b.fence);
        release_to_driver(b.ptr);
        unreserve_cached(device, class_bytes(c));
        ++n;
      }
    }
  }
  if (n != 0) rec::pool_count(rec::PoolCounter::released, device, n);
  return released;
}

// The generic wrapper's allocation, for what the pool does not take.
CUresult plain_alloc(PFN_cuMemAlloc_v3020 real, CallFacts& f, CUdeviceptr* dptr, size_t bytes, int dev) {
  Admission admission(HookId::cuMemAlloc_v2, MemKind::device, dev, bytes);
  if (!admission.admitted()) return CUDA_ERROR_OUT_OF_MEMORY;
  const CUresult r = real(dptr, bytes);
  if (r == CUDA_SUCCESS && dptr != nullptr) {
    admission.commit(*dptr, bytes);
    f.bytes = bytes;
    f.mem_kind = MemKind::device;
    f.key = *dptr;
  } else {
    admission.fail(r);
  }
  return r;
}

// A class-sized block from the driver; after a refusal (the cap, or the driver's own
// out-of-memory) the device's cached blocks are released and it asks once more.
CUresult driver_alloc(PFN_cuMemAlloc_v3020 real, CtxState* cs, CUdeviceptr* dptr, uint64_t bytes) {
  const int dev = cs->device;
  for (int attempt = 0; attempt < 2; ++attempt) {
    // Only the last attempt's refusal is the program's out-of-memory.
    const bool last = attempt == 1 || g_reserved[dev].load(std::memory_order_relaxed) == 0;
    Admission admission(HookId::cuMemAlloc_v2, MemKind::device, dev, bytes, last);
    if (!admission.admitted()) {
      if (last) return CUDA_ERROR_OUT_OF_MEMORY;
      rec::pool_count(rec::PoolCounter::trims, dev);
      release_cached(dev, ~0ull, true);
      continue;
    }
    const CUresult r = real(dptr, bytes);
    if (r == CUDA_SUCCESS) {
      admission.commit(*dptr, bytes);
      return r;
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY && !last) {
      admission.retry();
      rec::pool_count(rec::PoolCounter::trims, dev);
      release_cached(dev, ~0ull, true);
      continue;
    }
    admission.fail(r);
    return r;
  }
  return CUDA_ERROR_OUT_OF_MEMORY;
}

// How many cached blocks of a class an allocation looks at before going to the driver.
constexpr int kProbe = 4;

}  // namespace

// ---------------------------------------------------------------- the routed rows
CUresult pool_mem_alloc(PFN_cuMemAlloc_v3020 real, CallFacts& f, CUdeviceptr* dptr, size_t bytes) {
  const CUcontext ctx = dptr != nullptr && bytes != 0 ? current_ctx() : nullptr;
  CtxState* cs = ctx != nullptr ? ctx_state(ctx) : nullptr;
  if (cs == nullptr || bytes > cs->max_block) {
    const int dev = cs != nullptr ? cs->device : device_for(kCurrentDevice, 0);
    if (cs != nullptr) rec::pool_count(rec::PoolCounter::bypassed, dev);
    return plain_alloc(real, f, dptr, bytes, dev);
  }
  const int cls = class_of(bytes);
  const uint64_t csize = class_bytes(cls);
  Bin& bin = cs->bins[cls];
  Block hit{0, nullptr};
  bool waiting = false;
  {
    std::lock_guard<std::mutex> lock(bin.mu);
    int looked = 0;
    for (auto it = bin.blocks.begin(); it != bin.blocks.end() && looked < kProbe; ++it, ++looked) {
      if (fence_done(it->fence)) {
        hit = *it;
        if (looked == 0) bin.blocks.pop_front();  // the usual case, and much cheaper than erase()
        else bin.blocks.erase(it);
        break;
      }
      waiting = true;
    }
  }
  if (hit.ptr != 0) {
    if (BlockSlot* s = find_block(hit.ptr)) s->state.store(kLive, std::memory_order_release);
    rec::ledger_set_cached(hit.ptr, false);
    unreserve_cached(cs->device, csize);
    fence_unref(hit.fence);
    rec::pool_count(rec::PoolCounter::hits, cs->device);
    *dptr = hit.ptr;
    f.bytes = csize;
    f.mem_kind = MemKind::device;
    f.key = hit.ptr;
    return CUDA_SUCCESS;
  }
  rec::pool_count(rec::PoolCounter::misses, cs->device);
  if (waiting) rec::pool_count(rec::PoolCounter::not_ready, cs->device);
  const CUresult r = driver_alloc(real, cs, dptr, csize);
  if (r != CUDA_SUCCESS) return r;
  if (insert_block(*dptr, cs, cls) == nullptr) rec::pool_count(rec::PoolCounter::bypassed, cs->device);
  f.bytes = csize;
  f.mem_kind = MemKind::device;
  f.key = *dptr;
  return CUDA_SUCCESS;
}

// The real cuMemFree, timed into `f` (it waits for the device).
CUresult timed_free(PFN_cuMemFree_v3020 real, CallFacts& f, CUdeviceptr dptr) {
  f.t0 = now_ticks();
  const CUresult r = real(dptr);
  f.blocked_ticks = now_ticks() - f.t0;
  return r;
}

CUresult pool_mem_free(PFN_cuMemFree_v3020 real, CallFacts& f, CUdeviceptr dptr) {
  BlockSlot* s = dptr != 0 ? find_block(dptr) : nullptr;
  if (s == nullptr) {  // not the pool's: as without it
    rec::record_free(MemKind::device, dptr);
    return timed_free(real, f, dptr);
  }
  CtxState* cs = s->cs;
  const int cls = s->cls;
  const uint64_t csize = class_bytes(cls);
  uint8_t expect = kLive;
  if (!s->state.compare_exchange_strong(expect, kCached, std::memory_order_acq_rel))
    return CUDA_ERROR_INVALID_VALUE;  // freed twice: the driver's answer for an unknown pointer
  // Another context current (its fence would not cover this block's context), or no
  // room under the bound even after releasing finished blocks: free it for real.
  bool keep = current_ctx() == cs->ctx;
  if (keep && !reserve_cached(cs->device, csize, cs->max_cached)) {
    release_cached(cs->device, csize, false);
    keep = reserve_cached(cs->device, csize, cs->max_cached);
  }
  Fence* fence = keep ? fence_for_free(cs) : nullptr;
  if (fence == nullptr) {
    if (keep) unreserve_cached(cs->device, csize);
    erase_block(s);
    rec::pool_count(rec::PoolCounter::released, cs->device);
    rec::record_free(MemKind::device, dptr);
    return timed_free(real, f, dptr);
  }
  rec::ledger_set_cached(dptr, true);
  {
    std::lock_guard<std::mutex> lock(cs->bins[cls].mu);
    cs->bins[cls].blocks.push_back({dptr, fence});
  }
  g_flags.pooled_free = true;  // read by the outermost hook's observe() (cudaFree over cuMemFree)
  return CUDA_SUCCESS;
}

CUresult pool_stream_create(PFN_cuStreamCreate_v2000 real, CUstream* stream, unsigned int flags) {
  const CUresult r = real(stream, flags);
  if (r == CUDA_SUCCESS && stream != nullptr) {
    note_stream_created(flags, *stream);
    register_stream(*stream, flags);
  }
  return r;
}

CUresult pool_stream_create_prio(PFN_cuStreamCreateWithPriority_v5050 real, CUstream* stream, unsigned int flags,
                                 int priority) {
  const CUresult r = real(stream, flags, priority);
  if (r == CUDA_SUCCESS && stream != nullptr) {
    note_stream_created(flags, *stream);
    register_stream(*stream, flags);
  }
  return r;
}

// A stream destroyed with work pending keeps running it ("the resources associated with
// hStream will be released automatically once the device has completed all work in
// hStream"): record an orphan event on it first; later fences wait for it too.
CUresult pool_stream_destroy(PFN_cuStreamDestroy_v4000 real, CUstream stream) {
  StreamSlot* slot = stream != nullptr ? find_stream(stream) : nullptr;
  if (slot != nullptr && slot->kind.load(std::memory_order_acquire) == kNonBlocking &&
      (slot->dirty.exchange(false, std::memory_order_acq_rel) || stream_busy(slot) ||
       g_pool_all_streams_dirty.load(std::memory_order_acquire))) {
    CUcontext ctx = slot->ctx.load(std::memory_order_relaxed);
    if (ctx == nullptr) ctx = current_ctx();
    CtxState* cs = ctx != nullptr ? ctx_state(ctx) : nullptr;
    auto record = driver_fn(g_event_record, "cuEventRecord");
    bool recorded = false;
    if (cs != nullptr && record != nullptr) {
      std::lock_guard<std::mutex> lock(cs->mu);
      CUevent e = take_event(cs);
      if (e != nullptr && record(e, stream) == CUDA_SUCCESS) {
        cs->orphans.push_back({e, ++cs->orphan_seq});
        cs->orphan_count.store(cs->orphans.size(), std::memory_order_release);
        recorded = true;
      } else if (e != nullptr) {
        cs->spare.push_back(e);
      }
    }
    if (!recorded) g_untracked_work.store(true, std::memory_order_release);
    pool_mark_epoch();  // the next free makes a fence that covers it
  }
  if (slot != nullptr) {
    std::lock_guard<std::mutex> lock(g_stream_mu);
    slot->kind.store(kDead, std::memory_order_release);
    if (g_nb_list != nullptr) std::erase(*g_nb_list, static_cast<size_t>(slot - g_streams));
  }
  return real(stream);
}

void pool_note_stream_work(CUstream stream) {
  StreamSlot* slot = find_stream(stream);
  if (__builtin_expect(slot == nullptr || slot->kind.load(std::memory_order_acquire) == kDead, 0)) {
    // First sight of a stream the shim did not see created: ask the driver once
    // (cold), and treat it as non-blocking, which is always safe.
    auto get_ctx = driver_fn(g_stream_get_ctx, "cuStreamGetCtx");
    CUcontext ctx = nullptr;
    if (get_ctx == nullptr || get_ctx(stream, &ctx) != CUDA_SUCCESS) ctx = nullptr;
    std::lock_guard<std::mutex> lock(g_stream_mu);
    slot = register_stream_locked(stream, kNonBlocking, ctx);
    if (slot == nullptr) {
      g_untracked_work.store(true, std::memory_order_relaxed);
      return;
    }
  }
  if (slot->kind.load(std::memory_order_relaxed) == kNonBlocking && !slot->dirty.load(std::memory_order_relaxed))
    slot->dirty.store(true, std::memory_order_relaxed);
}

void pool_forget(unsigned long long dptr) {
  if (BlockSlot* s = find_block(dptr)) erase_block(s);
}

}  // namespace cudashim::shim
