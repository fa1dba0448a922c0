// dl_hooks.cpp: what the dlopen/dlsym trampolines (dl_trampolines.S) decide.
//
// dlsym/dlvsym: a name in the hook table, looked up by anyone but libcuda itself,
// is answered with our wrapper, but only after the real lookup succeeded (the
// wrapper then forwards to exactly what the caller would have got). Every other
// name goes to the real function with the caller's own return address, untouched.
#include <dlfcn.h>
#include <link.h>

#include <cstring>

#include "recorder/events.h"
#include "recorder/library_log.h"
#include "recorder/thread_slots.h"
#include "shim/thread_flags.h"
#include "catalog/hooks.h"
#include "shim/nvml_hooks.h"
#include "shim/real_dl.h"
#include "shim/resolve.h"
#include "symbols/cuda_library.h"

using cudashim::HookId;
namespace rec = cudashim::recorder;

namespace cudashim::shim {
namespace {

// True when `caller` is code inside a libcuda (it may dlsym its own handle, seen on WSL2).
bool called_from_driver(const void* caller) {
  Dl_info info;
  if (caller == nullptr || dladdr(caller, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* base = std::strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  return std::strncmp(base, "libcuda.so", 10) == 0;
}

// True when a dlopen names the driver library (by soname or path).
bool asks_for_libcuda(const char* file) {
  if (file == nullptr) return false;
  const char* base = std::strrchr(file, '/');
  base = base ? base + 1 : file;
  return std::strncmp(base, "libcuda.so", 10) == 0;
}

// Notes a dlopen of a CUDA-family library for the library watcher: the name and the
// caller, unless it is the shim's own (RTLD_NOLOAD probes of the inventory) or cannot
// change the loaded set. (The watcher sees loads and unloads in the loader's own counts.)
void note_dlopen(const char* file, int mode, void* caller) {
  if (in_internal() || (mode & RTLD_NOLOAD) != 0 || g_inert.load(std::memory_order_relaxed)) return;
  if (file == nullptr) return;
  const char* base = std::strrchr(file, '/');
  base = base ? base + 1 : file;
  // Only CUDA-family requests go to the ring: a Python import dlopens hundreds of
  // extension modules, which would push the ones that matter out of it.
  bool cuda_family = false;
  try {
    cuda_family = cudashim::symbols::classify_cuda_library(base).has_value();
  } catch (...) {
  }
  if (!cuda_family) return;
  rec::log_dlopen(file, caller);
  // The watcher runs on the event stream's thread, which the first hooked call starts: a
  // process that loads CUDA libraries but never calls CUDA gets no thread and no files.
}

// Shared by dlsym and dlvsym: `real` is the real lookup's result for `id`.
// Returns what the caller gets.
void* answer_hooked(HookId id, void* real, void* handle, const char* name, const char* version) {
  const RealDl& dl = real_dl();
  if (real != nullptr && is_own_address(real)) {
    // RTLD_DEFAULT found our own export first: the real one is the next definition.
    real = version ? dl.dlvsym(RTLD_NEXT, name, version) : dl.dlsym(RTLD_NEXT, name);
    if (real != nullptr && is_own_address(real)) real = nullptr;
  }
  if (real == nullptr) return nullptr;  // dlerror() says why, as it would without us
  if (!adopt_real(id, real)) return real;
  rec::count_event(rec::Event::dlsym_substituted);
  return wrapper_of(id);
}

// A dlopen of the program's (not one the shim makes itself: the library watcher's
// RTLD_NOLOAD probes and dlclose run inside an InternalScope): counted, and noted.
void count_dlopen(const char* file, int mode, void* caller) {
  if (in_internal()) return;
  rec::count_event(rec::Event::dlopen_calls);
  if (asks_for_libcuda(file)) rec::count_event(rec::Event::libcuda_dlopen_requests);
  note_dlopen(file, mode, caller);
}

// The decisions behind each entry point (below).
void* dlopen_enter(const char* file, int mode, void* caller) {
  count_dlopen(file, mode, caller);
  return reinterpret_cast<void*>(real_dl().dlopen);
}

void* dlmopen_enter(Lmid_t lmid, const char* file, int mode, void* caller) {
  count_dlopen(file, mode, caller);
  return reinterpret_cast<void*>(real_dl().dlmopen);
}

void* dlclose_enter(void* handle, void* caller) {
  if (!in_internal()) rec::count_event(rec::Event::dlclose_calls);
  return reinterpret_cast<void*>(real_dl().dlclose);
}

void* dlsym_decide(void* handle, const char* name, void* caller, void** out) {
  const RealDl& dl = real_dl();
  const bool active = name != nullptr && !in_internal() && !g_inert.load(std::memory_order_relaxed);
  const HookId id = active ? cudashim::find_hook(name) : HookId::kCount;
  if (id == HookId::kCount && active && std::strncmp(name, "nvmlDeviceGetMemoryInfo", 23) == 0) {
    *out = nvml_answer(name, dl.dlsym(handle, name));  // NVML's memory views, capped (nvml_hooks.h)
    return nullptr;
  }
  if (id == HookId::kCount) {
    if (!in_internal()) rec::count_event(rec::Event::dlsym_passthrough);
    return reinterpret_cast<void*>(dl.dlsym);
  }
  if (called_from_driver(caller)) {
    rec::count_event(rec::Event::dlsym_from_driver);
    return reinterpret_cast<void*>(dl.dlsym);
  }
  *out = answer_hooked(id, dl.dlsym(handle, name), handle, name, nullptr);
  return nullptr;
}

void* dlvsym_decide(void* handle, const char* name, const char* version, void* caller, void** out) {
  const RealDl& dl = real_dl();
  const bool active = name != nullptr && !in_internal() && !g_inert.load(std::memory_order_relaxed);
  const HookId id = active ? cudashim::find_hook(name) : HookId::kCount;
  if (id == HookId::kCount && active && std::strncmp(name, "nvmlDeviceGetMemoryInfo", 23) == 0) {
    *out = nvml_answer(name, dl.dlvsym(handle, name, version));
    return nullptr;
  }
  if (id == HookId::kCount) {
    if (!in_internal()) rec::count_event(rec::Event::dlsym_passthrough);
    return reinterpret_cast<void*>(dl.dlvsym);
  }
  if (called_from_driver(caller)) {
    rec::count_event(rec::Event::dlsym_from_driver);
    return reinterpret_cast<void*>(dl.dlvsym);
  }
  *out = answer_hooked(id, dl.dlvsym(handle, name, version), handle, name, version);
  return nullptr;
}

// ThreadSanitizer's runtime calls dlsym/dlvsym(RTLD_NEXT, ...) for each of its
// interceptors before any constructor runs, when instrumented code (the recorder, the
// hook table) faults in its function-entry hook. In such a tree the entry points only
// forward until our first constructor ran; elsewhere they always decide.
#if defined(__SANITIZE_THREAD__)
#define CUDASHIM_FORWARD_EARLY 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CUDASHIM_FORWARD_EARLY 1
#endif
#endif
#ifdef CUDASHIM_FORWARD_EARLY
CUDASHIM_NO_TSAN bool forward_only() { return !shim_constructed(); }
#else
constexpr bool forward_only() { return false; }
#endif

}  // namespace
}  // namespace cudashim::shim

using namespace cudashim::shim;

// The entry points the trampolines call: uninstrumented, so that forwarding works before
// the sanitizer runtime is ready (real_dl() is uninstrumented too).
extern "C" {

// Called by the dlopen trampoline; returns the real dlopen to jump to.
CUDASHIM_NO_TSAN __attribute__((visibility("hidden"))) void* cudashim_dlopen_enter(const char* file, int mode,
                                                                                    void* caller) {
  if (forward_only()) return reinterpret_cast<void*>(real_dl().dlopen);
  return dlopen_enter(file, mode, caller);
}

CUDASHIM_NO_TSAN __attribute__((visibility("hidden"))) void* cudashim_dlmopen_enter(Lmid_t lmid, const char* file,
                                                                                     int mode, void* caller) {
  if (forward_only()) return reinterpret_cast<void*>(real_dl().dlmopen);
  return dlmopen_enter(lmid, file, mode, caller);
}

CUDASHIM_NO_TSAN __attribute__((visibility("hidden"))) void* cudashim_dlclose_enter(void* handle, void* caller) {
  if (forward_only()) return reinterpret_cast<void*>(real_dl().dlclose);
  return dlclose_enter(handle, caller);
}

// Returns the real dlsym to jump to, or nullptr after storing the answer in *out.
CUDASHIM_NO_TSAN __attribute__((visibility("hidden"))) void* cudashim_dlsym_decide(void* handle, const char* name,
                                                                                    void* caller, void** out) {
  if (forward_only()) return reinterpret_cast<void*>(real_dl().dlsym);
  return dlsym_decide(handle, name, caller, out);
}

CUDASHIM_NO_TSAN __attribute__((visibility("hidden"))) void* cudashim_dlvsym_decide(void* handle, const char* name,
                                                                                     const char* version, void* caller,
                                                                                     void** out) {
  if (forward_only()) return reinterpret_cast<void*>(real_dl().dlvsym);
  return dlvsym_decide(handle, name, version, caller, out);
}

}  // extern "C"
