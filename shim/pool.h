// pool.h: the opt-in caching pool for programs that call cuMemAlloc/cuMemFree (or
// cudaMalloc/cudaFree, which reach them) in a loop. CUDASHIM_POOL=1; docs/pool.md.
//
// The guarantee: a freed block is handed out again only once the device has finished
// all work issued before the free. At a free, the pool records completion events on the
// legacy default stream (which waits for every blocking stream of the context, the
// per-thread default streams included) and on every non-blocking stream that got work
// since the last such record; a cached block is reused only after its events completed.
//
// Hot paths (launches, copies) only mark work: a relaxed load and, the first time after a
// free, a relaxed store; a launch on a non-default stream also probes a fixed table. The
// pool's own alloc/free path takes a lock per size class and may allocate.
#pragma once
#include <atomic>
#include <cstdint>

#include "policy/admission.h"
#include "shim/cuda_abi.h"
#include "catalog/hooks.h"
#include "shim/sync_observer.h"
#include "shim/thread_flags.h"

namespace cudashim::shim {

// Stream work since the last fence, as an epoch: odd while some work was noted since a
// fence was made, even after. A free's fence is shared only while the epoch it was made
// in is current; the step from odd to even is one atomic operation, so two contexts' frees
// cannot both take one launch's mark (a flag taken, then a generation bumped, could).
extern std::atomic<uint64_t> g_pool_epoch;
// Marks work since the last fence, after the stream's own mark (pool_note_stream_work). The
// mark is skipped when the epoch is odd already (no atomic read-modify-write per launch), so a
// fence made meanwhile by another thread need not see this thread's stream mark: the launching
// thread's own next free therefore never shares a fence (ThreadFlags::pool_work), and its
// scan sees its own marks; a stream whose mark another fence took is `busy` there and is
// recorded on again.
inline void pool_mark_epoch() {
  if (!(g_pool_epoch.load(std::memory_order_relaxed) & 1)) g_pool_epoch.fetch_or(1, std::memory_order_release);
}
// Set by work whose stream the hook does not know (copies, memsets): every tracked
// non-blocking stream counts as having work.
extern std::atomic<bool> g_pool_all_streams_dirty;

// Marks work on `stream` (out of line: a probe of the stream table).
void pool_note_stream_work(CUstream stream);

// A launch on `stream`, after the real launch returned: an event a fence records on the
// stream from now on comes after the kernel in the stream's order (marked before the launch,
// another thread's fence could record its event ahead of the kernel and clear the mark).
// pre: the pool is on. No lock, no allocation, no syscall.
inline void pool_note_launch(CUstream stream) {
  g_flags.pool_work = true;
  if (stream != nullptr && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD) pool_note_stream_work(stream);
  pool_mark_epoch();
}

// A copy or memset whose stream the hook does not know, after the real call. pre: the pool is on.
inline void pool_note_copy() {
  g_flags.pool_work = true;
  if (!g_pool_all_streams_dirty.load(std::memory_order_relaxed))
    g_pool_all_streams_dirty.store(true, std::memory_order_release);
  pool_mark_epoch();
}

// The pool's versions of the routed rows: each does what the generic wrapper would
// (policy admission, ledger, the real call) plus the pool's part, and fills `f` for the
// call site. Each returns the CUresult the program sees.
CUresult pool_mem_alloc(PFN_cuMemAlloc_v3020 real, CallFacts& f, CUdeviceptr* dptr, size_t bytes);
CUresult pool_mem_free(PFN_cuMemFree_v3020 real, CallFacts& f, CUdeviceptr dptr);
CUresult pool_stream_create(PFN_cuStreamCreate_v2000 real, CUstream* stream, unsigned int flags);
CUresult pool_stream_create_prio(PFN_cuStreamCreateWithPriority_v5050 real, CUstream* stream, unsigned int flags,
                                 int priority);
CUresult pool_stream_destroy(PFN_cuStreamDestroy_v4000 real, CUstream stream);

// A device pointer freed by another path (cuMemFreeAsync): the pool forgets it.
void pool_forget(unsigned long long dptr);

// Rows whose whole call the pool takes over while it is on (ROLE_POOL_ROUTED in catalog/hooks.def).
constexpr bool pool_routed(HookId id) { return hook_info(id).has(ROLE_POOL_ROUTED); }

// Dispatches a routed row to the pool. Instantiated for every row (the wrapper body is
// shared) but reached only for pool_routed() rows; a routed row without a case here fails
// to compile.
template <HookId id, class F, class... A>
inline auto pool_call(CallFacts& f, F real, A... a) -> decltype(real(a...)) {
  if constexpr (id == HookId::cuMemAlloc_v2) return pool_mem_alloc(real, f, a...);
  else if constexpr (id == HookId::cuMemFree_v2) return pool_mem_free(real, f, a...);
  else if constexpr (id == HookId::cuStreamCreate) return pool_stream_create(real, a...);
  else if constexpr (id == HookId::cuStreamCreateWithPriority) return pool_stream_create_prio(real, a...);
  else if constexpr (id == HookId::cuStreamDestroy_v2) return pool_stream_destroy(real, a...);
  else {
    static_assert(!pool_routed(id), "a ROLE_POOL_ROUTED row needs its pool function here");
    return real(a...);
  }
}

}  // namespace cudashim::shim
