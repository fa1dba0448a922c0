/* naive_interposer.c: how NOT to interpose dlopen/dlsym (the way several peers do):
 * C wrappers that call the real functions from inside the interposer. The loader
 * then takes the interposer as the caller. The control test preloads this and
 * expects dl_semantics to FAIL, proving that test catches the bug class that
 * cudashim's tail-jumping trampolines (shim/dl_trampolines.S) avoid. */
#define _GNU_SOURCE
#include <dlfcn.h>

void* dlopen(const char* file, int mode) {
  void* (*real)(const char*, int) = (void* (*)(const char*, int))dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34");
  void* r = real(file, mode);
  __asm__ volatile("" ::: "memory"); /* not a tail call: the call returns here, like any wrapper that records */
  return r;
}

void* dlsym(void* handle, const char* name) {
  void* (*real)(void*, const char*) = (void* (*)(void*, const char*))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  void* r = real(handle, name);
  __asm__ volatile("" ::: "memory");
  return r;
}
