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

namespace cudashim::shim {

class Admission {
 public:
  // Asks the policy for `charged` bytes of `kind` on `device` and charges them when admitted.
  // `final`: a refusal is the program's out-of-memory (logged, counted); false for a caller
  // that frees cached memory and asks again (the pool), so that only its last refusal counts.
  Admission(HookId api, MemKind kind, int device, uint64_t charged, bool final = true);
  // A charge neither committed nor given back is rolled back (no path leaves one).
  ~Admission();
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  bool admitted() const { return state_ == State::charged; }
  // The real allocation succeeded: the ledger remembers `key` with the `bytes` the driver gave.
  void commit(uint64_t key, uint64_t bytes);
  // The real allocation failed with `result`: the charge is taken back; an out-of-memory is logged.
  void fail(uint64_t result);
  // The caller will free cached memory and ask again: the charge is taken back, nothing logged.
  void retry();

 private:
  enum class State : uint8_t { refused, charged, done };
  HookId api_;
  MemKind kind_;
  int device_;
  uint64_t charged_;
  State state_;
};

}  // namespace cudashim::shim
