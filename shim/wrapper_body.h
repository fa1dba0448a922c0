// wrapper_body.h: the one shape every generated wrapper has.
//
//   call the real function, make one recorder call, return the real result.
// Frees are recorded *before* the real call (the address cannot be reused in
// between); allocations are admitted by the policy before it and recorded after
// it. Only TIMING != NONE rows read the clock (twice). Launches and queries read
// nothing and touch only this thread's slot. Blocking calls, copies, allocations
// and frees also go to their call site (shim/sync_observer.cpp) at the outermost
// hook only, so a runtime call over a driver call is attributed once.
#pragma once
#include <type_traits>

#include "policy/admission.h"
#include "recorder/clock.h"
#include "recorder/recorder.h"
#include "shim/hook_abi.h"
#include "shim/resolve.h"
#include "shim/library_watch.h"
#include "shim/oom_notice.h"
#include "shim/pool.h"
#include "shim/sync_observer.h"
#include "shim/torch_counters.h"

#define CUDASHIM_EXPORT __attribute__((visibility("default")))

namespace cudashim::shim {
// What every successful allocation notes, the driver's (CUDASHIM_POST_ALLOC) or the pool's
// (CUDASHIM_POOL_ROUTE): torch's counters may now be worth reading, this thread's OOM
// recovery is over, and under an outer call (cudaMalloc) the outer site claims it.
inline void note_allocated(recorder::CallScope& scope, const CallFacts& f) {
  torch_counters_arm();
  note_alloc_succeeded();
  if (!scope.outermost()) note_inner_alloc(f);
}
}  // namespace cudashim::shim

// ---- before the real call
#define CUDASHIM_PRE_PASS(...)
#define CUDASHIM_PRE_RESOLVE(...)
// Copies and memsets (the stream is not in REC): stream work, for the pool's fences.
#define CUDASHIM_PRE_COPY(...) \
  if (::cudashim::policy::pool_enabled()) ::cudashim::shim::pool_note_copy();
#define CUDASHIM_PRE_MEMINFO(...)
#define CUDASHIM_PRE_TOTALMEM(...)
// Launches: stream work, for the pool's fences (one relaxed load while the pool is off).
#define CUDASHIM_PRE_LAUNCH(STREAM) \
  if (::cudashim::policy::pool_enabled()) ::cudashim::shim::pool_note_launch(STREAM);
#define CUDASHIM_PRE_STREAM(...)
#define CUDASHIM_PRE_CTXFLAGS(...)
#define CUDASHIM_PRE_MODLOAD(...)
#define CUDASHIM_PRE_DRVVER(...)
#define CUDASHIM_PRE_FREE(KIND, KEY)                                                          \
  if constexpr (::cudashim::hook_info(kId).has(::cudashim::ROLE_STREAM_FREE))                                   \
    if (::cudashim::policy::pool_enabled()) ::cudashim::shim::pool_forget(static_cast<unsigned long long>(KEY)); \
  ::cudashim::recorder::record_free(KIND, static_cast<unsigned long long>(KEY));
// Allocation: the policy admits (and charges) before the real call; a refusal is
// CUDA_ERROR_OUT_OF_MEMORY on every path, the one code frameworks recover from.
#define CUDASHIM_PRE_ALLOC(KIND, KEY, BYTES, DEVICE, PRE_BYTES)                                     \
  const int dev_ = ::cudashim::shim::device_for(DEVICE, 0);                                         \
  const unsigned long long charged_ = (PRE_BYTES);                                                  \
  if (::cudashim::policy::admit(kId, KIND, dev_, charged_) != ::cudashim::policy::Verdict::admit) { \
    ::cudashim::shim::note_denied(kId, dev_, charged_);                                             \
    ::cudashim::shim::note_oom(kId, dev_, charged_, true);                                          \
    scope.finish(CUDA_ERROR_OUT_OF_MEMORY, 0);                                                      \
    return CUDA_ERROR_OUT_OF_MEMORY;                                                                \
  }

// ---- after the real call (r is its result)
#define CUDASHIM_POST_PASS(...)
#define CUDASHIM_POST_RESOLVE(...)
#define CUDASHIM_POST_FREE(...)
#define CUDASHIM_POST_COPY(BYTES, DIR, HOST) \
  facts_.bytes = (BYTES);                    \
  facts_.dir = (DIR);                        \
  facts_.host = (HOST);                      \
  scope.add_bytes(facts_.bytes);
#define CUDASHIM_POST_ALLOC(KIND, KEY, BYTES, DEVICE, PRE_BYTES) \
  if (r == 0) {                                                  \
    facts_.bytes = (BYTES);                                      \
    facts_.mem_kind = (KIND);                                    \
    facts_.key = (KEY);                                          \
    ::cudashim::policy::commit(KIND, facts_.key, facts_.bytes, charged_, dev_); \
    ::cudashim::shim::note_allocated(scope, facts_);             \
  } else {                                                       \
    ::cudashim::policy::rollback(kId, KIND, dev_, charged_, r);  \
    if (r == CUDA_ERROR_OUT_OF_MEMORY) ::cudashim::shim::note_oom(kId, dev_, charged_, false); \
  }
#define CUDASHIM_POST_MEMINFO(FREE, TOTAL) \
  if (r == 0) ::cudashim::policy::cap_mem_info(::cudashim::shim::device_for(::cudashim::kCurrentDevice, 0), FREE, TOTAL);
#define CUDASHIM_POST_TOTALMEM(BYTES, DEV) \
  if (r == 0) ::cudashim::policy::cap_total_mem(DEV, BYTES);
// Work on the legacy default stream: stream 0 (or CU_STREAM_LEGACY) through an
// entry point that is not per-thread. One compare and one slot store.
// Work on a blocking stream that cudashim saw created: the two together serialize.
#define CUDASHIM_POST_LAUNCH(STREAM)                                                                     \
  if (!::cudashim::hook_info(kId).per_thread && ((STREAM) == nullptr || (STREAM) == CU_STREAM_LEGACY)) \
    ::cudashim::recorder::bump(scope.thread(), scope.thread().slot->legacy_stream_launches, 1);          \
  else if (::cudashim::shim::is_blocking_stream(STREAM))                                                 \
    ::cudashim::shim::note_blocking_stream_launch(scope.thread());
#define CUDASHIM_POST_STREAM(FLAGS, PSTREAM) \
  if (r == 0 && (PSTREAM) != nullptr) ::cudashim::shim::note_stream_created(FLAGS, *(PSTREAM));
// Module loads (cold): what the image is, how much of it serves this GPU, how long it took.
#define CUDASHIM_POST_MODLOAD(IMAGE, IS_PATH) \
  ::cudashim::shim::note_module_load(kId, IMAGE, IS_PATH, static_cast<int>(r), dt, __builtin_return_address(0));
#define CUDASHIM_POST_DRVVER(OUT) \
  if (r == 0 && (OUT) != nullptr) ::cudashim::shim::note_driver_version(*(OUT));
#define CUDASHIM_POST_CTXFLAGS(FLAGS) \
  if (r == 0) ::cudashim::shim::note_context_flags(kId, FLAGS);

// Rows whose calls go to a call site: blocking or timed calls, copies, allocations, frees,
// and the runtime's untimed allocation calls, whose driver allocation (made under them, so
// never outermost) takes their site through note_inner_alloc(): leaks and the OOM context
// name the caller of cudaMalloc.
#define CUDASHIM_SITE_ROW(KIND, TIMING)                                                           \
  (::cudashim::Timing::TIMING != ::cudashim::Timing::NONE || ::cudashim::RecKind::KIND == ::cudashim::RecKind::ALLOC || \
   ::cudashim::RecKind::KIND == ::cudashim::RecKind::FREE || ::cudashim::RecKind::KIND == ::cudashim::RecKind::COPY || \
   ::cudashim::shim::runtime_alloc_row(kId))

// The pool (CUDASHIM_POOL=1, shim/pool.h) takes over a few rows' whole call while it is on.
#define CUDASHIM_ARGS_TAIL(...) __VA_OPT__(, ) __VA_ARGS__
#define CUDASHIM_POOL_ROUTE(TIMING, ARGS)                                                                  \
  if constexpr (::cudashim::shim::pool_routed(kId)) {                                                      \
    if (::cudashim::policy::pool_enabled()) {                                                              \
      /* the pool times only its calls into the driver (facts_.t0, blocked_ticks): a free */              \
      /* the cache takes never blocks and reads no clock */                                                 \
      const auto pr_ = ::cudashim::shim::pool_call<kId>(facts_, real CUDASHIM_ARGS_TAIL ARGS);             \
      const uint64_t pdt_ = facts_.blocked_ticks;                                                          \
      if (static_cast<int>(pr_) == 0 && facts_.key != 0) ::cudashim::shim::note_allocated(scope, facts_); \
      if constexpr (kSite)                                                                                 \
        if (scope.outermost()) ::cudashim::shim::observe(kId, __builtin_return_address(0), pdt_, facts_);  \
      scope.finish(static_cast<uint64_t>(pr_), pdt_);                                                      \
      return pr_;                                                                                          \
    }                                                                                                      \
  }

// The body of a wrapper named NAME whose real function has type FN_TYPE.
#define CUDASHIM_WRAPPER_BODY(NAME, KIND, TIMING, FN_TYPE, MISSING, ARGS, REC)                 \
  constexpr ::cudashim::HookId kId = ::cudashim::HookId::NAME;                              \
  const auto real = reinterpret_cast<FN_TYPE>(::cudashim::shim::real_of(kId));             \
  if (__builtin_expect(real == nullptr, 0)) {                                               \
    ::cudashim::shim::note_missing_real(kId);                                               \
    return MISSING;                                                                         \
  }                                                                                         \
  ::cudashim::recorder::CallScope scope(kId);                                               \
  constexpr bool kSite = CUDASHIM_SITE_ROW(KIND, TIMING);                                   \
  [[maybe_unused]] ::cudashim::shim::CallFacts facts_{};                                    \
  CUDASHIM_POOL_ROUTE(TIMING, ARGS)                                                         \
  CUDASHIM_PRE_##KIND REC;                                                                  \
  constexpr bool kTimed = ::cudashim::Timing::TIMING != ::cudashim::Timing::NONE;         \
  constexpr bool kBlocking = ::cudashim::Timing::TIMING == ::cudashim::Timing::BLOCKING;  \
  if constexpr (kBlocking) facts_.cpu0 = ::cudashim::shim::maybe_sample_cpu(scope);        \
  const uint64_t t0 = kTimed ? ::cudashim::now_ticks() : 0;                                 \
  facts_.t0 = t0;                                                                           \
  const auto r = real ARGS;                                                                 \
  const uint64_t dt = kTimed ? ::cudashim::now_ticks() - t0 : 0;                            \
  CUDASHIM_POST_##KIND REC;                                                                 \
  if constexpr (kSite)                                                                      \
    if (scope.outermost()) ::cudashim::shim::observe(kId, __builtin_return_address(0), dt, facts_); \
  scope.finish(static_cast<uint64_t>(r), dt);                                               \
  return r;
