// driver_hooks.cpp: the driver API wrappers, one per driver row of catalog/hooks.def. Each
// declares its exact ABI, checks it against the row's cudaTypedefs.h type, and forwards to
// on_call (shim/on_call.h). cuGetProcAddress* are written by hand (shim/proc_address.cpp).
#include <type_traits>

#include "shim/on_call.h"

#define CUDASHIM_DRIVER(NAME, FAMILY, DIR, KIND, TIMING, ROLES, PFN, PARAMS, ARGS, RECARGS)                   \
  extern "C" CUDASHIM_EXPORT CUresult CUDAAPI NAME PARAMS {                                                  \
    constexpr ::cudashim::HookId kId = ::cudashim::HookId::NAME;                                             \
    return ::cudashim::shim::on_call<kId, PFN>(CUDA_ERROR_NOT_FOUND, __builtin_return_address(0),            \
                                               [&](auto fn) { return fn ARGS; },                             \
                                               [&] { return std::make_tuple RECARGS; });                     \
  }                                                                                                          \
  static_assert(std::is_same_v<decltype(&NAME), PFN>, #NAME " must have the signature of " #PFN);
#define CUDASHIM_DRIVER_HANDWRITTEN(NAME, FAMILY, DIR, KIND, TIMING, ...) \
  static_assert(::cudashim::hook_info(::cudashim::HookId::NAME).kind == ::cudashim::RecKind::RESOLVE);
#define CUDASHIM_RUNTIME(...)
#include "catalog/hooks.def"
