// driver_hooks.cpp: the driver API wrappers, generated from catalog/hooks.def.
// (cuGetProcAddress* are hand-written in proc_address.cpp.)
#include "shim/wrapper_body.h"

#define CUDASHIM_DEFINE_RESOLVE(NAME, PFN, PARAMS)  // hand-written elsewhere
#define CUDASHIM_DEFINE_GENERIC(NAME, KIND, TIMING, PFN, PARAMS, ARGS, REC)               \
  extern "C" CUDASHIM_EXPORT CUresult CUDAAPI NAME PARAMS {                              \
    CUDASHIM_WRAPPER_BODY(NAME, KIND, TIMING, PFN, CUDA_ERROR_NOT_FOUND, ARGS, REC)      \
  }                                                                                      \
  static_assert(std::is_same_v<decltype(&NAME), PFN>, #NAME " must have the signature of " #PFN);

#define CUDASHIM_SELECT_PASS CUDASHIM_DEFINE_GENERIC
#define CUDASHIM_SELECT_ALLOC CUDASHIM_DEFINE_GENERIC
#define CUDASHIM_SELECT_FREE CUDASHIM_DEFINE_GENERIC
#define CUDASHIM_SELECT_COPY CUDASHIM_DEFINE_GENERIC
#define CUDASHIM_SELECT_MEMINFO CUDASHIM_DEFINE_GENERIC
#define CUDASHIM_SELECT_TOTALMEM CUDASHIM_DEFINE_GENERIC
#define CUDASHIM_SELECT_LAUNCH CUDASHIM_DEFINE_GENERIC
#define CUDASHIM_SELECT_STREAM CUDASHIM_DEFINE_GENERIC
#define CUDASHIM_SELECT_CTXFLAGS CUDASHIM_DEFINE_GENERIC
#define CUDASHIM_SELECT_MODLOAD CUDASHIM_DEFINE_GENERIC
#define CUDASHIM_SELECT_DRVVER CUDASHIM_DEFINE_GENERIC
#define CUDASHIM_SELECT_RESOLVE(NAME, KIND, TIMING, PFN, PARAMS, ARGS, REC) \
  static_assert(::cudashim::hook_info(::cudashim::HookId::NAME).kind == ::cudashim::RecKind::RESOLVE);

#define CUDASHIM_DRIVER(NAME, FAMILY, DIR, KIND, TIMING, ROLES, PFN, PARAMS, ARGS, REC) \
  CUDASHIM_SELECT_##KIND(NAME, KIND, TIMING, PFN, PARAMS, ARGS, REC)
#define CUDASHIM_RUNTIME(...)
#include "catalog/hooks.def"
