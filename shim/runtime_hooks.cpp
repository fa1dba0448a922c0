// runtime_hooks.cpp: the runtime API wrappers (shared libcudart), generated from
// catalog/hooks.def. Runtime rows nest over driver rows: memory is accounted once, at
// the driver level; these rows add the runtime's view (calls, blocked time).
#include "shim/wrapper_body.h"

#define CUDASHIM_RUNTIME(NAME, FAMILY, DIR, KIND, TIMING, ROLES, PARAMS, ARGS, REC)                    \
  extern "C" CUDASHIM_EXPORT cudaError_t CUDARTAPI NAME PARAMS {                                        \
    using Fn = cudaError_t(CUDARTAPI*) PARAMS;                                                          \
    CUDASHIM_WRAPPER_BODY(NAME, KIND, TIMING, Fn, cudaErrorSymbolNotFound, ARGS, REC)                    \
  }

// cudaThreadSynchronize is deprecated in 12.x headers: we define it on purpose, to
// see (and later flag) the programs that still call it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#define CUDASHIM_DRIVER(...)
#include "catalog/hooks.def"
#pragma GCC diagnostic pop
