// kind_steps.h: what a wrapper does before and after its real call, per recorded kind.
//
// on_call (shim/on_call.h) is the one sequence every wrapper follows: the real function,
// the scope, the real call, the call site, the result. What differs between rows is what
// their REC column says: an allocation is admitted before the call and committed after it,
// a free is recorded before it, a launch counts legacy-stream work after it, and so on.
// Each RecKind (catalog/rec_kinds.def) has its steps here, in one specialization of
// KindSteps; a kind with none uses the primary template, which does nothing. Adding a
// feature to a kind touches that kind's specialization only.
//
// A kind's steps:
//   before<kId>(c)      before the real call and before the clock is read; returns the state
//                       handed to after(). Its admitted() false refuses the call: the wrapper
//                       returns CUDA_ERROR_OUT_OF_MEMORY without calling (ALLOC only).
//   kSubmitsWork        the call queues GPU work: it ends the GPU idle after this thread's
//                       last drain (shim/drain_idle.h), at the wrapper's clock read.
//   after<kId>(st, c, r, dt)  after the real call (r its result, dt its ticks when timed).
// Every step is always_inline, so everything here is inlined into the generated wrapper: no
// call, lock or allocation is added on the hot path beyond what each step itself states.
#pragma once
#include <tuple>

#include "policy/admission.h"
#include "policy/sync_rules.h"
#include "recorder/recorder.h"
#include "shim/admission_scope.h"
#include "shim/hook_abi.h"
#include "shim/library_watch.h"
#include "shim/oom_notice.h"
#include "shim/pool.h"
#include "shim/resolve.h"
#include "shim/sync_observer.h"
#include "shim/torch_counters.h"
#include "shim/wait_sampler.h"

namespace cudashim::shim {

// One call as the steps see it: its scope, the facts the call site will get, the wrapper's
// RECARGS reader (returns the REC column as a tuple; out-parameters are written after the
// call) and its return address.
template <class Rec>
struct CallParts {
  recorder::CallScope& scope;
  CallFacts& facts;
  Rec& rec;
  const void* caller;
};

// What every successful allocation notes, the driver's or the pool's: torch's counters may
// now be worth reading, this thread's OOM recovery is over, and under an outer call
// (cudaMalloc) the outer site claims it.
[[gnu::always_inline]] inline void note_allocated(recorder::CallScope& scope, const CallFacts& f) {
  torch_counters_arm();
  note_alloc_succeeded();
  if (!scope.outermost()) note_inner_alloc(f);
}

// The state of a kind that never refuses a call.
struct Proceed {
  static constexpr bool admitted() { return true; }
};

// Kinds with no steps of their own (PASS, RESOLVE).
template <RecKind K>
struct KindSteps {
  static constexpr bool kSubmitsWork = false;
  template <HookId kId, class Rec>
  [[gnu::always_inline]] static Proceed before(CallParts<Rec>&) {
    return {};
  }
  template <HookId kId, class Rec, class R>
  [[gnu::always_inline]] static void after(Proceed&, CallParts<Rec>&, R, uint64_t) {}
};

// Allocations: admitted (and charged) before the call; after it, committed to the ledger
// under the key and bytes the driver wrote, or rolled back.
template <>
struct KindSteps<RecKind::ALLOC> {
  static constexpr bool kSubmitsWork = false;
  template <HookId kId, class Rec>
  [[gnu::always_inline]] static Admission before(CallParts<Rec>& c) {
    [[maybe_unused]] const auto [kind, key, bytes, device, pre_bytes] = c.rec();
    return Admission(kId, kind, device_for(device, 0), pre_bytes);
  }
  template <HookId kId, class Rec, class R>
  [[gnu::always_inline]] static void after(Admission& admission, CallParts<Rec>& c, R r, uint64_t) {
    if (r != 0) {
      admission.fail(static_cast<uint64_t>(r));
      return;
    }
    [[maybe_unused]] const auto [kind, key, bytes, device, pre] = c.rec();  // the out-parameters, now written
    c.facts.bytes = bytes;
    c.facts.mem_kind = kind;
    c.facts.key = key;
    admission.commit(c.facts.key, c.facts.bytes);
    note_allocated(c.scope, c.facts);
  }
};

// Frees: recorded *before* the call (the address cannot be handed out again in between); a
// stream-ordered free also leaves the pool's books while it is on.
template <>
struct KindSteps<RecKind::FREE> {
  static constexpr bool kSubmitsWork = false;
  template <HookId kId, class Rec>
  [[gnu::always_inline]] static Proceed before(CallParts<Rec>& c) {
    [[maybe_unused]] const auto [kind, key] = c.rec();
    if constexpr (hook_info(kId).has(ROLE_STREAM_FREE))
      if (policy::pool_enabled()) pool_forget(static_cast<unsigned long long>(key));
    recorder::record_free(kind, static_cast<unsigned long long>(key));
    return {};
  }
  template <HookId kId, class Rec, class R>
  [[gnu::always_inline]] static void after(Proceed&, CallParts<Rec>&, R, uint64_t) {}
};

// Copies and memsets: a thread with no Python frame (XLA's) starting a host-device copy
// leaves the wait sampler its mark (shim/wait_sampler.h; one TLS load on every other thread).
// After it: the pool's fence notes the stream work, and the bytes go to the scope and the site.
template <>
struct KindSteps<RecKind::COPY> {
  static constexpr bool kSubmitsWork = true;
  template <HookId kId, class Rec>
  [[gnu::always_inline]] static Proceed before(CallParts<Rec>& c) {
    if (__builtin_expect(g_flags.frameless_copier, 0) && c.scope.outermost()) {
      [[maybe_unused]] const auto [bytes, dir, host] = c.rec();  // the copy's arguments: readable before it
      if (dir == CopyDir::H2D || dir == CopyDir::D2H)
        note_copy_start(*c.scope.thread().slot, policy::is_readback(dir, bytes));
    }
    return {};
  }
  template <HookId kId, class Rec, class R>
  [[gnu::always_inline]] static void after(Proceed&, CallParts<Rec>& c, R, uint64_t) {
    if (policy::pool_enabled()) pool_note_copy();  // one relaxed load while off (pool.h says why after the call)
    [[maybe_unused]] const auto [bytes, dir, host] = c.rec();
    c.facts.bytes = bytes;
    c.facts.dir = dir;
    c.facts.host = host;
    c.scope.add_bytes(c.facts.bytes);
  }
};

// Launches: work between two hits of a site (they are not one burst: sync_observer.h). After
// the call, the pool's fence notes the stream, and work on the legacy default stream (stream 0
// or CU_STREAM_LEGACY through an entry point that is not per-thread) or on a blocking stream
// the program created is counted: the two together serialize. One compare and one slot store.
template <>
struct KindSteps<RecKind::LAUNCH> {
  static constexpr bool kSubmitsWork = true;
  template <HookId kId, class Rec>
  [[gnu::always_inline]] static Proceed before(CallParts<Rec>&) {
    ++g_flags.activity;
    return {};
  }
  template <HookId kId, class Rec, class R>
  [[gnu::always_inline]] static void after(Proceed&, CallParts<Rec>& c, R, uint64_t) {
    const CUstream stream = std::get<0>(c.rec());
    if (policy::pool_enabled()) pool_note_launch(stream);
    if (!hook_info(kId).per_thread && (stream == nullptr || stream == CU_STREAM_LEGACY))
      recorder::bump(c.scope.thread(), c.scope.thread().slot->legacy_stream_launches, 1);
    else if (is_blocking_stream(stream))
      note_blocking_stream_launch(c.scope.thread());
  }
};

// The kinds whose only step reads what the call returned (cold calls, all of them): a
// specialization names the step, the rest of the kind is the primary template's.
template <RecKind K>
struct AfterOnly {
  static constexpr bool kSubmitsWork = false;
  template <HookId kId, class Rec>
  [[gnu::always_inline]] static Proceed before(CallParts<Rec>&) {
    return {};
  }
};

// cuMemGetInfo: free and total as the policy's cap on the current device says.
template <>
struct KindSteps<RecKind::MEMINFO> : AfterOnly<RecKind::MEMINFO> {
  template <HookId kId, class Rec, class R>
  [[gnu::always_inline]] static void after(Proceed&, CallParts<Rec>& c, R r, uint64_t) {
    [[maybe_unused]] const auto [free, total] = c.rec();
    if (r == 0) policy::cap_mem_info(device_for(kCurrentDevice, 0), free, total);
  }
};

// cuDeviceTotalMem: the total as the policy's cap on that device says.
template <>
struct KindSteps<RecKind::TOTALMEM> : AfterOnly<RecKind::TOTALMEM> {
  template <HookId kId, class Rec, class R>
  [[gnu::always_inline]] static void after(Proceed&, CallParts<Rec>& c, R r, uint64_t) {
    [[maybe_unused]] const auto [bytes, device] = c.rec();
    if (r == 0) policy::cap_total_mem(device, bytes);
  }
};

// Stream creation: blocking streams are noted (the legacy-stream rule).
template <>
struct KindSteps<RecKind::STREAM> : AfterOnly<RecKind::STREAM> {
  template <HookId kId, class Rec, class R>
  [[gnu::always_inline]] static void after(Proceed&, CallParts<Rec>& c, R r, uint64_t) {
    [[maybe_unused]] const auto [flags, pstream] = c.rec();
    if (r == 0 && pstream != nullptr) note_stream_created(flags, *pstream);
  }
};

// Module loads (cold): what the image is, how much of it serves this GPU, how long it took.
template <>
struct KindSteps<RecKind::MODLOAD> : AfterOnly<RecKind::MODLOAD> {
  template <HookId kId, class Rec, class R>
  [[gnu::always_inline]] static void after(Proceed&, CallParts<Rec>& c, R r, uint64_t dt) {
    [[maybe_unused]] const auto [image, is_path] = c.rec();
    note_module_load(kId, image, is_path, static_cast<int>(r), dt, c.caller);
  }
};

// cuDriverGetVersion: the driver's CUDA version, kept for the live rules.
template <>
struct KindSteps<RecKind::DRVVER> : AfterOnly<RecKind::DRVVER> {
  template <HookId kId, class Rec, class R>
  [[gnu::always_inline]] static void after(Proceed&, CallParts<Rec>& c, R r, uint64_t) {
    [[maybe_unused]] const auto [out] = c.rec();
    if (r == 0 && out != nullptr) note_driver_version(*out);
  }
};

// Context creation and the primary context's flags: deprecated flags noted.
template <>
struct KindSteps<RecKind::CTXFLAGS> : AfterOnly<RecKind::CTXFLAGS> {
  template <HookId kId, class Rec, class R>
  [[gnu::always_inline]] static void after(Proceed&, CallParts<Rec>& c, R r, uint64_t) {
    [[maybe_unused]] const auto [flags] = c.rec();
    if (r == 0) note_context_flags(kId, flags);
  }
};

}  // namespace cudashim::shim
