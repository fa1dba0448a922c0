// admission_scope.h: one allocation's passage through the allocator policy, the one
// sequence every allocating path follows (the wrappers, shim/on_call.h, and the pool,
// shim/pool.cpp): admit (and charge) before the real call, then commit or roll back.
//
// A refusal is answered with CUDA_ERROR_OUT_OF_MEMORY by the caller on every path, async
// ones included: PyTorch frees its cache and retries on that code only; anything else
// ends as "unrecognized error" (policy/admission.h).
#pragma once
#include <cstdint>

#include "catalog/hooks.h"
#include "catalog/mem_kinds.h"
#include "policy/admission.h"
#include "shim/cuda_abi.h"
#include "shim/oom_notice.h"
#include "shim/resolve.h"

namespace cudashim::shim {

// Inline: on a wrapper's allocation path it adds no call beyond the policy's own.
class Admission {
 public:
  // Asks the policy for `charged` bytes of `kind` on `device` and charges them when admitted.
  // `final`: a refusal is the program's out-of-memory (logged, counted); false for a caller
  // that frees cached memory and asks again (the pool), so that only its last refusal counts.
  Admission(HookId api, MemKind kind, int device, uint64_t charged, bool final = true)
      : api_(api), kind_(kind), device_(device), charged_(charged), state_(State::refused) {
    const policy::Verdict v = final ? policy::admit(api, kind, device, charged) : policy::try_admit(kind, device, charged);
    if (v == policy::Verdict::admit) {
      state_ = State::charged;
    } else if (final) {
      note_denied(api, device, charged);
      note_oom(api, device, charged, true);
    }
  }
  // A charge neither committed nor given back is rolled back (no path leaves one).
  ~Admission() {
    if (__builtin_expect(state_ == State::charged, 0)) policy::uncharge(kind_, device_, charged_);
  }
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  bool admitted() const { return state_ == State::charged; }
  // The real allocation succeeded: the ledger remembers `key` with the `bytes` the driver gave.
  void commit(uint64_t key, uint64_t bytes) {
    policy::commit(kind_, key, bytes, charged_, device_);
    state_ = State::done;
  }
  // The real allocation failed with `result`: the charge is taken back; an out-of-memory is logged.
  void fail(uint64_t result) {
    policy::rollback(api_, kind_, device_, charged_, result);
    if (result == CUDA_ERROR_OUT_OF_MEMORY) note_oom(api_, device_, charged_, false);
    state_ = State::done;
  }
  // The caller will free cached memory and ask again: the charge is taken back, nothing logged.
  void retry() {
    policy::uncharge(kind_, device_, charged_);
    state_ = State::done;
  }

 private:
  enum class State : uint8_t { refused, charged, done };
  HookId api_;
  MemKind kind_;
  int device_;
  uint64_t charged_;
  State state_;
};

}  // namespace cudashim::shim
