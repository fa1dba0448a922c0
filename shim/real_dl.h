// real_dl.h: the C library's own dlopen/dlsym family, found without ever
// resolving to cudashim's interposers.
#pragma once
#include <dlfcn.h>

namespace cudashim::shim {

struct RealDl {
  void* (*dlsym)(void*, const char*);
  void* (*dlvsym)(void*, const char*, const char*);
  void* (*dlopen)(const char*, int);
  void* (*dlmopen)(Lmid_t, const char*, int);
  int (*dlclose)(void*);
};

// Returns the real functions, resolving them on first use (no allocation, no lock).
// dlvsym is read from libc's own dynamic symbol table (GLIBC_2.34, else
// GLIBC_2.2.5): calling `dlvsym` by name from here would bind to our own
// interposer. The rest come from dlvsym(RTLD_NEXT, name, "GLIBC_2.34"), falling
// back to "GLIBC_2.2.5" (dlvsym(3); never _dl_sym, which is GLIBC_PRIVATE and broke
// peers that hook CUDA inside containers).
// Aborts with a message naming the symbol when libc offers none.
const RealDl& real_dl();

// Resolves `name` in the process's global scope (RTLD_DEFAULT) into `fn`, through the real
// dlsym; false when nothing defines it (CPython's API in a process without Python).
template <typename T>
bool find_global(T& fn, const char* name) {
  fn = reinterpret_cast<T>(real_dl().dlsym(RTLD_DEFAULT, name));
  return fn != nullptr;
}

// True when `addr` lies inside libcudashim.so itself (a wrapper, never a real function).
bool is_own_address(const void* addr);

// True once the library's first constructor ran. Before that, in a CUDASHIM_TSAN tree,
// the dl* entry points only forward (shim/dl_hooks.cpp): the first dlsym calls come
// from the sanitizer runtime setting itself up, when instrumented code cannot run yet.
bool shim_constructed();

// On code that may run before a sanitizer runtime is initialised (no instrumentation,
// not even the function-entry hook, which faults then).
#define CUDASHIM_NO_TSAN __attribute__((no_sanitize("thread")))

}  // namespace cudashim::shim
