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
// Call the real function, make one recorder call, return the real result. Frees are
// recorded *before* the real call (the address cannot be handed out again in between);
// allocations are admitted by the policy before it and recorded after it (shim/
// admission_scope.h). Only rows with TIMING != NONE read the clock (twice). Launches and
// queries read nothing and touch only this thread's slot. Blocking calls, copies,
// allocations and frees also go to their call site (shim/sync_observer.cpp) at the
// outermost hook only, so a runtime call over a driver call is attributed once.
// Everything here is inlined into the wrapper: no call, lock or allocation is added.
#pragma once
#include <tuple>

#include "policy/admission.h"
#include "policy/sync_rules.h"
#include "recorder/clock.h"
#include "recorder/recorder.h"
#include "shim/admission_scope.h"
#include "shim/drain_idle.h"
#include "shim/hook_abi.h"
#include "shim/library_watch.h"
#include "shim/oom_notice.h"
#include "shim/pool.h"
#include "shim/resolve.h"
#include "shim/sync_observer.h"
#include "shim/torch_counters.h"
#include "shim/wait_sampler.h"

namespace cudashim::shim {

// What every successful allocation notes, the driver's or the pool's: torch's counters may
// now be worth reading, this thread's OOM recovery is over, and under an outer call
// (cudaMalloc) the outer site claims it.
inline void note_allocated(recorder::CallScope& scope, const CallFacts& f) {
  torch_counters_arm();
  note_alloc_succeeded();
  if (!scope.outermost()) note_inner_alloc(f);
}

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

// The wrapper of row `kId`, whose real function has type `Fn`. `missing` is returned when
// no real function exists (an entry point this driver or runtime lacks); `caller` is the
// wrapper's return address (the program's call site).
template <HookId kId, class Fn, class R, class Call, class Rec>
[[gnu::always_inline]] inline R on_call(R missing, const void* caller, Call&& call, Rec&& rec) {
  constexpr HookInfo kRow = hook_info(kId);
  constexpr bool kTimed = kRow.timing != Timing::NONE;
  const auto real = reinterpret_cast<Fn>(real_of(kId));
  if (__builtin_expect(real == nullptr, 0)) {
    note_missing_real(kId);
    return missing;
  }
  recorder::CallScope scope(kId);
  CallFacts facts{};

  // The pool (CUDASHIM_POOL=1, shim/pool.h) takes over a routed row's whole call while it is
  // on. It times only its calls into the driver (facts.blocked_ticks): a free the cache takes
  // never blocks and reads no clock.
  if constexpr (kRow.has(ROLE_POOL_ROUTED)) {
    if (policy::pool_enabled()) {
      const R r = call([&](auto... a) { return pool_call<kId>(facts, real, a...); });
      if (static_cast<int>(r) == 0 && facts.key != 0) note_allocated(scope, facts);
      return finish_call<kId>(scope, facts, caller, r, facts.blocked_ticks);
    }
  }

  // ---- before the real call
  if constexpr (kRow.kind == RecKind::ALLOC) {
    // Admitted (and charged) before the call; a refusal is CUDA_ERROR_OUT_OF_MEMORY.
    [[maybe_unused]] const auto [kind, key, bytes, device, pre_bytes] = rec();
    Admission admission(kId, kind, device_for(device, 0), pre_bytes);
    if (!admission.admitted()) {
      scope.finish(CUDA_ERROR_OUT_OF_MEMORY, 0);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    const uint64_t t0 = kTimed ? now_ticks() : 0;
    facts.t0 = t0;
    const R r = call(real);
    const uint64_t dt = kTimed ? now_ticks() - t0 : 0;
    if (r == 0) {
      [[maybe_unused]] const auto [kind_, key_, bytes_, device_, pre_] = rec();  // the out-parameters, now written
      facts.bytes = bytes_;
      facts.mem_kind = kind_;
      facts.key = key_;
      admission.commit(facts.key, facts.bytes);
      note_allocated(scope, facts);
    } else {
      admission.fail(static_cast<uint64_t>(r));
    }
    return finish_call<kId>(scope, facts, caller, r, dt);
  } else {
    if constexpr (kRow.kind == RecKind::FREE) {
      [[maybe_unused]] const auto [kind, key] = rec();
      if constexpr (kRow.has(ROLE_STREAM_FREE))
        if (policy::pool_enabled()) pool_forget(static_cast<unsigned long long>(key));
      recorder::record_free(kind, static_cast<unsigned long long>(key));
    } else if constexpr (kRow.kind == RecKind::LAUNCH) {
      ++g_flags.activity;  // work between two hits of a site: they are not one burst (sync_observer.h)
    }
    if constexpr (kRow.timing == Timing::BLOCKING) facts.cpu0 = maybe_sample_cpu(scope);
    // A thread with no Python frame (XLA's) starting a host-device copy: the wait sampler's mark
    // (shim/wait_sampler.h). One TLS load on every other thread.
    if constexpr (kRow.kind == RecKind::COPY) {
      if (__builtin_expect(g_flags.frameless_copier, 0) && scope.outermost()) {
        [[maybe_unused]] const auto [bytes, dir, host] = rec();  // the copy's arguments: readable before it
        if (dir == CopyDir::H2D || dir == CopyDir::D2H)
          note_copy_start(*scope.thread().slot, policy::is_readback(dir, bytes));
      }
    }
    const uint64_t t0 = kTimed ? now_ticks() : 0;
    facts.t0 = t0;
    // Submitted work ends the GPU idle after this thread's last drain (one TLS compare without one).
    if constexpr (kRow.kind == RecKind::LAUNCH || kRow.kind == RecKind::COPY) end_drained_idle(t0);

    const R r = call(real);

    // ---- after the real call
    const uint64_t dt = kTimed ? now_ticks() - t0 : 0;
    // Stream work for the pool's fences, once the real call has queued it (pool.h says why after).
    if constexpr (kRow.kind == RecKind::COPY) {
      if (policy::pool_enabled()) pool_note_copy();  // one relaxed load while off
    } else if constexpr (kRow.kind == RecKind::LAUNCH) {
      if (policy::pool_enabled()) pool_note_launch(std::get<0>(rec()));
    }
    if constexpr (kRow.kind == RecKind::COPY) {
      [[maybe_unused]] const auto [bytes, dir, host] = rec();
      facts.bytes = bytes;
      facts.dir = dir;
      facts.host = host;
      scope.add_bytes(facts.bytes);
    } else if constexpr (kRow.kind == RecKind::MEMINFO) {
      [[maybe_unused]] const auto [free, total] = rec();
      if (r == 0) policy::cap_mem_info(device_for(kCurrentDevice, 0), free, total);
    } else if constexpr (kRow.kind == RecKind::TOTALMEM) {
      [[maybe_unused]] const auto [bytes, device] = rec();
      if (r == 0) policy::cap_total_mem(device, bytes);
    } else if constexpr (kRow.kind == RecKind::LAUNCH) {
      // Work on the legacy default stream: stream 0 (or CU_STREAM_LEGACY) through an entry
      // point that is not per-thread; work on a blocking stream the program created: the
      // two together serialize. One compare and one slot store.
      const CUstream stream = std::get<0>(rec());
      if (!kRow.per_thread && (stream == nullptr || stream == CU_STREAM_LEGACY))
        recorder::bump(scope.thread(), scope.thread().slot->legacy_stream_launches, 1);
      else if (is_blocking_stream(stream))
        note_blocking_stream_launch(scope.thread());
    } else if constexpr (kRow.kind == RecKind::STREAM) {
      [[maybe_unused]] const auto [flags, pstream] = rec();
      if (r == 0 && pstream != nullptr) note_stream_created(flags, *pstream);
    } else if constexpr (kRow.kind == RecKind::MODLOAD) {
      // Cold: what the image is, how much of it serves this GPU, how long it took.
      [[maybe_unused]] const auto [image, is_path] = rec();
      note_module_load(kId, image, is_path, static_cast<int>(r), dt, caller);
    } else if constexpr (kRow.kind == RecKind::DRVVER) {
      [[maybe_unused]] const auto [out] = rec();
      if (r == 0 && out != nullptr) note_driver_version(*out);
    } else if constexpr (kRow.kind == RecKind::CTXFLAGS) {
      [[maybe_unused]] const auto [flags] = rec();
      if (r == 0) note_context_flags(kId, flags);
    }
    return finish_call<kId>(scope, facts, caller, r, dt);
  }
}

}  // namespace cudashim::shim
