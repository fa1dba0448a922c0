/* dl_semantics: the loader behaves with cudashim preloaded exactly as without it.
 * Each check is a bug an interposer of dlopen/dlsym can cause. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int rp_caller_load(void);
const char* next_of_which(void);
const char* which_lib(void);
extern int next_b_marker;

static int failures = 0;
#define EXPECT(cond, what)                            \
  do {                                                \
    if (cond) printf("ok: %s\n", what);               \
    else { printf("FAIL: %s\n", what); ++failures; } \
  } while (0)

int main(void) {
  EXPECT(next_b_marker == 1, "libnext_b.so is loaded after libnext_a.so");
  EXPECT(rp_caller_load() == 1, "dlopen from a library searches that library's RUNPATH ($ORIGIN/sub)");
  EXPECT(strcmp(next_of_which(), "B") == 0, "dlsym(RTLD_NEXT) searches after the calling library");
  EXPECT(dlsym(RTLD_DEFAULT, "which_lib") == (void*)&which_lib, "dlsym(RTLD_DEFAULT) finds the first definition");
  EXPECT(dlsym(RTLD_DEFAULT, "cuMemAlloc_v2") == NULL,
         "with no driver loaded, a hooked name is not found (the shim's own export does not leak)");
  EXPECT(dlerror() != NULL, "a failed dlsym leaves a dlerror() message");
  EXPECT(dlsym(RTLD_DEFAULT, "no_such_symbol_anywhere") == NULL && dlerror() != NULL, "unknown names fail as usual");
  void* self = dlopen(NULL, RTLD_NOW);
  EXPECT(self != NULL && dlsym(self, "which_lib") == (void*)&which_lib, "dlopen(NULL) and dlsym on the main program's scope");
  /* printf's first version: the architecture's first glibc (x86-64: 2.2.5; AArch64: 2.17) */
#if defined(__aarch64__)
  EXPECT(dlvsym(RTLD_DEFAULT, "printf", "GLIBC_2.17") != NULL, "dlvsym with a version passes through");
#else
  EXPECT(dlvsym(RTLD_DEFAULT, "printf", "GLIBC_2.2.5") != NULL, "dlvsym with a version passes through");
#endif
  return failures ? 1 : 0;
}
