// on_call.h: what every generated wrapper does, in ordinary C++ on its row's columns.
//
// A wrapper (shim/driver_hooks.cpp, shim/runtime_hooks.cpp) declares its exact ABI and
// forwards here with two lambdas over its parameters: `call` applies a function to the
// call's arguments (the ARGS column), `rec` returns the RECARGS column as a tuple:
//
//   extern "C" CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
//     return on_call<HookId::cuMemAlloc_v2, PFN_cuMemAlloc_v3020>(CUDA_ERROR_NOT_FOUND,
//         __builtin_return_address(0), [&](auto fn) { return fn(dptr, bytesize); },
//         [&] { return std::make_tuple(MemKind::device, REC_OUT(dptr), bytesize, ...); });
//   }
//
// Call the real function, make one recorder call, return the real result. What a row does
// before and after its real call is its recorded kind's (shim/kind_steps.h: frees recorded
// before the call, allocations admitted before it and recorded after it, ...). Only rows with
// TIMING != NONE read the clock (twice). Launches and queries read nothing and touch only this
// thread's slot. Blocking calls, copies, allocations and frees also go to their call site
// (shim/sync_observer.cpp) at the outermost hook only, so a runtime call over a driver call is
// attributed once. Everything here is inlined into the wrapper: no call, lock or allocation
// is added.
#pragma once
#include <type_traits>

#include "policy/admission.h"
#include "recorder/clock.h"
#include "recorder/recorder.h"
#include "shim/drain_idle.h"
#include "shim/hook_abi.h"
#include "shim/kind_steps.h"
#include "shim/pool.h"
#include "shim/resolve.h"
#include "shim/sync_observer.h"

namespace cudashim::shim {

// Rows whose calls go to a call site: blocking or timed calls, copies, allocations, frees,
// and the runtime's untimed allocation calls, whose driver allocation (made under them, so
// never outermost) takes their site through note_inner_alloc(): leaks and the OOM context
// name the caller of cudaMalloc.
constexpr bool is_site_row(const HookInfo& h) {
  return h.timing != Timing::NONE || h.kind == RecKind::ALLOC || h.kind == RecKind::FREE ||
         h.kind == RecKind::COPY || h.has(ROLE_RUNTIME_ALLOC);
}

// The end of every call: its site (outermost hooks of site rows), its counters, its result.
template <HookId kId, class R>
[[gnu::always_inline]] inline R finish_call(recorder::CallScope& scope, const CallFacts& facts, const void* caller,
                                            R r, uint64_t ticks) {
  if constexpr (is_site_row(hook_info(kId)))
    if (scope.outermost()) observe(kId, caller, ticks, facts);
  scope.finish(static_cast<uint64_t>(r), ticks);
  return r;
}

// The pool (CUDASHIM_POOL=1, shim/pool.h) takes over a routed row's whole call while it is on.
// It times only its calls into the driver (facts.blocked_ticks): a free the cache takes never
// blocks and reads no clock.
template <HookId kId, class Fn, class Call>
[[gnu::always_inline]] inline auto pool_route(recorder::CallScope& scope, CallFacts& facts, const void* caller,
                                              Fn real, Call& call) {
  const auto r = call([&](auto... a) { return pool_call<kId>(facts, real, a...); });
  if (static_cast<int>(r) == 0 && facts.key != 0) note_allocated(scope, facts);
  return finish_call<kId>(scope, facts, caller, r, facts.blocked_ticks);
}

// The wrapper of row `kId`, whose real function has type `Fn`. `missing` is returned when
// no real function exists (an entry point this driver or runtime lacks); `caller` is the
// wrapper's return address (the program's call site).
template <HookId kId, class Fn, class R, class Call, class Rec>
[[gnu::always_inline]] inline R on_call(R missing, const void* caller, Call&& call, Rec&& rec) {
  constexpr HookInfo kRow = hook_info(kId);
  constexpr bool kTimed = kRow.timing != Timing::NONE;
  using Steps = KindSteps<kRow.kind>;
  const auto real = reinterpret_cast<Fn>(real_of(kId));
  if (__builtin_expect(real == nullptr, 0)) {
    note_missing_real(kId);
    return missing;
  }
  recorder::CallScope scope(kId);
  CallFacts facts{};
  if constexpr (kRow.has(ROLE_POOL_ROUTED))
    if (policy::pool_enabled()) return pool_route<kId>(scope, facts, caller, real, call);
  CallParts<std::remove_reference_t<Rec>> parts{scope, facts, rec, caller};
  auto state = Steps::template before<kId>(parts);
  if (!state.admitted()) {  // an allocation the policy refused: the program's out-of-memory
    scope.finish(CUDA_ERROR_OUT_OF_MEMORY, 0);
    return static_cast<R>(CUDA_ERROR_OUT_OF_MEMORY);
  }
  if constexpr (kRow.timing == Timing::BLOCKING) facts.cpu0 = maybe_sample_cpu(scope);
  facts.t0 = kTimed ? now_ticks() : 0;
  if constexpr (Steps::kSubmitsWork) end_drained_idle(facts.t0);  // one TLS compare without a drain
  const R r = call(real);
  const uint64_t dt = kTimed ? now_ticks() - facts.t0 : 0;
  Steps::template after<kId>(state, parts, r, dt);
  return finish_call<kId>(scope, facts, caller, r, dt);
}

}  // namespace cudashim::shim
