// runtime_hooks.cpp: the runtime API wrappers (shared libcudart), one per runtime row of
// catalog/hooks.def, forwarding to on_call (shim/on_call.h). Runtime rows nest over driver
// rows: memory is accounted once, at the driver level; these rows add the runtime's view
// (calls, blocked time, call sites).
#include "shim/on_call.h"

#define CUDASHIM_RUNTIME(NAME, FAMILY, DIR, KIND, TIMING, ROLES, PARAMS, ARGS, RECARGS)                 \
  extern "C" CUDASHIM_EXPORT cudaError_t CUDARTAPI NAME PARAMS {                                      \
    constexpr ::cudashim::HookId kId = ::cudashim::HookId::NAME;                                      \
    using Fn = cudaError_t(CUDARTAPI*) PARAMS;                                                        \
    return ::cudashim::shim::on_call<kId, Fn>(cudaErrorSymbolNotFound, __builtin_return_address(0),   \
                                              [&](auto fn) { return fn ARGS; },                       \
                                              [&] { return std::make_tuple RECARGS; });               \
  }
#define CUDASHIM_DRIVER(...)

// cudaThreadSynchronize is deprecated in 12.x headers: we define it on purpose, to see (and
// flag, api.deprecated-sync) the programs that still call it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include "catalog/hooks.def"
#pragma GCC diagnostic pop
