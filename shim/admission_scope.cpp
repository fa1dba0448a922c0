// admission_scope.cpp: the admit → deny → commit/rollback sequence, written once.
#include "shim/admission_scope.h"

#include "policy/admission.h"
#include "shim/cuda_abi.h"
#include "shim/oom_notice.h"
#include "shim/resolve.h"

namespace cudashim::shim {

Admission::Admission(HookId api, MemKind kind, int device, uint64_t charged, bool final)
    : api_(api), kind_(kind), device_(device), charged_(charged), state_(State::refused) {
  const policy::Verdict v = final ? policy::admit(api, kind, device, charged) : policy::try_admit(kind, device, charged);
  if (v == policy::Verdict::admit) {
    state_ = State::charged;
  } else if (final) {
    note_denied(api, device, charged);
    note_oom(api, device, charged, true);
  }
}

Admission::~Admission() {
  if (state_ == State::charged) policy::uncharge(kind_, device_, charged_);
}

void Admission::commit(uint64_t key, uint64_t bytes) {
  policy::commit(kind_, key, bytes, charged_, device_);
  state_ = State::done;
}

void Admission::fail(uint64_t result) {
  policy::rollback(api_, kind_, device_, charged_, result);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) note_oom(api_, device_, charged_, false);
  state_ = State::done;
}

void Admission::retry() {
  policy::uncharge(kind_, device_, charged_);
  state_ = State::done;
}

}  // namespace cudashim::shim
