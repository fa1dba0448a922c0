// thread_flags.cpp: the shim's per-thread flags (shim/thread_flags.h).
#include "shim/thread_flags.h"

namespace cudashim::shim {
__thread ThreadFlags g_flags __attribute__((tls_model("initial-exec"))) = {};
}  // namespace cudashim::shim
