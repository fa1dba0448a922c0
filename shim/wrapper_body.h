// wrapper_body.h: the one shape every generated wrapper has.
//
//   call the real function, make one recorder call, return the real result.
// Frees are recorded *before* the real call (the address cannot be reused in
// between); allocations after it, when it succeeded. Only TIMING != NONE rows read
// the clock (twice); launches and queries read nothing.
#pragma once
#include <type_traits>

#include "policy/admission.h"
#include "recorder/clock.h"
#include "recorder/recorder.h"
#include "shim/hook_catalog.h"
#include "shim/resolve.h"

#define CUDASHIM_EXPORT __attribute__((visibility("default")))

#define CUDASHIM_PRE_PASS(...)
#define CUDASHIM_PRE_RESOLVE(...)
#define CUDASHIM_PRE_MEMINFO(...)
#define CUDASHIM_PRE_TOTALMEM(...)
// Allocation: the policy admits (and charges) before the real call; a refusal is
// CUDA_ERROR_OUT_OF_MEMORY on every path, the one code frameworks recover from.
#define CUDASHIM_PRE_ALLOC(KIND, KEY, BYTES, DEVICE, PRE_BYTES)                                         \
  const int dev_ = ::cudashim::shim::device_for(DEVICE, 0);                                             \
  const unsigned long long charged_ = (PRE_BYTES);                                                      \
  if (::cudashim::policy::admit(kId, KIND, dev_, charged_) != ::cudashim::policy::Verdict::admit) {     \
    ::cudashim::shim::note_denied(kId, dev_, charged_);                                                 \
    scope.finish(CUDA_ERROR_OUT_OF_MEMORY, 0);                                                          \
    return CUDA_ERROR_OUT_OF_MEMORY;                                                                    \
  }
#define CUDASHIM_PRE_COPY(...)
#define CUDASHIM_PRE_FREE(KIND, KEY) ::cudashim::recorder::record_free(KIND, static_cast<unsigned long long>(KEY));

#define CUDASHIM_POST_PASS(...)
#define CUDASHIM_POST_RESOLVE(...)
#define CUDASHIM_POST_FREE(...)
#define CUDASHIM_POST_COPY(BYTES) scope.add_bytes(BYTES);
#define CUDASHIM_POST_ALLOC(KIND, KEY, BYTES, DEVICE, PRE_BYTES)      \
  if (r == 0)                                                          \
    ::cudashim::policy::commit(KIND, KEY, BYTES, charged_, dev_);      \
  else                                                                 \
    ::cudashim::policy::rollback(kId, KIND, dev_, charged_, r);
#define CUDASHIM_POST_MEMINFO(FREE, TOTAL) \
  if (r == 0) ::cudashim::policy::cap_mem_info(::cudashim::shim::device_for(::cudashim::kCurrentDevice, 0), FREE, TOTAL);
#define CUDASHIM_POST_TOTALMEM(BYTES, DEV) \
  if (r == 0) ::cudashim::policy::cap_total_mem(DEV, BYTES);

// The body of a wrapper named NAME whose real function has type FN_TYPE.
#define CUDASHIM_WRAPPER_BODY(NAME, KIND, TIMING, FN_TYPE, MISSING, ARGS, REC)                         \
  constexpr ::cudashim::HookId kId = ::cudashim::HookId::NAME;                                      \
  const auto real = reinterpret_cast<FN_TYPE>(::cudashim::shim::real_of(kId));                     \
  if (__builtin_expect(real == nullptr, 0)) {                                                       \
    ::cudashim::shim::note_missing_real(kId);                                                       \
    return MISSING;                                                                                 \
  }                                                                                                 \
  ::cudashim::recorder::CallScope scope(kId);                                                       \
  CUDASHIM_PRE_##KIND REC;                                                                          \
  constexpr bool kTimed = ::cudashim::Timing::TIMING != ::cudashim::Timing::NONE;                 \
  const uint64_t t0 = kTimed ? ::cudashim::now_ticks() : 0;                                            \
  const auto r = real ARGS;                                                                         \
  const uint64_t dt = kTimed ? ::cudashim::now_ticks() - t0 : 0;                                       \
  CUDASHIM_POST_##KIND REC;                                                                         \
  scope.finish(static_cast<uint64_t>(r), dt);                                                                         \
  return r;
