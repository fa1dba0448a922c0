/* libnext_a.so and libnext_b.so both define which_lib(); A asks for the *next*
 * definition after itself, which is B's. Computed relative to an interposer that
 * sits before A, RTLD_NEXT would find A's own. */
#define _GNU_SOURCE
#include <dlfcn.h>
const char* which_lib(void) { return "A"; }
const char* next_of_which(void) {
  const char* (*f)(void) = (const char* (*)(void))dlsym(RTLD_NEXT, "which_lib");
  return f ? f() : "none";
}
