/* librp_caller.so: dlopens librp_target.so by bare name; only its own RUNPATH
 * ($ORIGIN/sub) finds it. A dlopen interposer that calls the real dlopen from its
 * own code makes *itself* the caller, and this lookup fails. */
#include <dlfcn.h>
#include <stddef.h>
int rp_caller_load(void) {
  void* h = dlopen("librp_target.so", RTLD_NOW);
  if (h == NULL) return 0;
  const char* (*name)(void) = (const char* (*)(void))dlsym(h, "rp_target_name");
  return name != NULL && name()[0] == 't';
}
