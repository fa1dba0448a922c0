// cupti_hooks.cpp: the CUPTI entry points a profiler calls when it starts (torch.profiler's
// Kineto: cuptiActivityRegisterCallbacks, cuptiActivityEnable, cuptiSubscribe; Nsight and
// other tools: the same, or cuptiActivityEnableContext). Each tells the precise mode that a
// client arrived (shim/cupti_collector.h: the first call flushes and stops cudashim's
// collection), then calls the real function with the same arguments and returns its result
// unchanged. Exported through shim/exports.map (cu*) and listed in tests/hygiene/check_exports.py.
//
// They interpose what binds by name (a DT_NEEDED libcupti: torch's wheels); a profiler that
// dlopens libcupti and dlsyms these on its handle is not seen (docs/gpu-time.md).
#include "shim/cupti_abi.h"
#include "shim/cupti_collector.h"

namespace cudashim::shim {
namespace {

constexpr cupti::Result kErrorNotInitialized = 15;  // CUPTI_ERROR_NOT_INITIALIZED: no libcupti behind us

// Tells the collector, then calls the real `name` of type Fn.
template <typename Fn, typename... Args>
cupti::Result forward(const char* name, const void* caller, Args... args) {
  cupti_foreign_call(name, caller);
  auto fn = reinterpret_cast<Fn>(cupti_real(name));
  return fn != nullptr ? fn(args...) : kErrorNotInitialized;
}

}  // namespace
}  // namespace cudashim::shim

using namespace cudashim::shim;
using namespace cudashim;
#define CUPTI_HOOK extern "C" __attribute__((visibility("default")))

CUPTI_HOOK cupti::Result cuptiActivityRegisterCallbacks(cupti::BufferRequested requested, cupti::BufferCompleted completed) {
  return forward<cupti::RegisterCallbacksFn>("cuptiActivityRegisterCallbacks", __builtin_return_address(0), requested,
                                             completed);
}
CUPTI_HOOK cupti::Result cuptiActivityEnable(int kind) {
  return forward<cupti::ActivityKindFn>("cuptiActivityEnable", __builtin_return_address(0), kind);
}
CUPTI_HOOK cupti::Result cuptiActivityEnableContext(void* context, int kind) {
  return forward<cupti::EnableContextFn>("cuptiActivityEnableContext", __builtin_return_address(0), context, kind);
}
CUPTI_HOOK cupti::Result cuptiSubscribe(void** subscriber, void* callback, void* userdata) {
  return forward<cupti::SubscribeFn>("cuptiSubscribe", __builtin_return_address(0), subscriber, callback, userdata);
}
