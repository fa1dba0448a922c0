// dlopen_sequence: loads libraries in order, then calls the driver (so the shim writes a report),
// waits 1.5 s and prints "MARK loaded".
//   dlopen_sequence [now|lazy]:PATH ...
// Each PATH is opened RTLD_GLOBAL with RTLD_NOW or RTLD_LAZY; a failed dlopen prints dlerror()
// and exits 3 (the real loader's verdict, for tests to compare with the shim's).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const bool lazy = std::strncmp(argv[i], "lazy:", 5) == 0;
    const char* path = std::strchr(argv[i], ':') ? std::strchr(argv[i], ':') + 1 : argv[i];
    if (dlopen(path, (lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_GLOBAL) == nullptr) {
      std::fprintf(stderr, "dlopen_sequence: %s\n", dlerror());
      return 3;
    }
  }
  void* cu = dlopen("libcuda.so.1", RTLD_NOW);
  auto init = cu ? reinterpret_cast<int (*)(unsigned)>(dlsym(cu, "cuInit")) : nullptr;
  if (init == nullptr || init(0) != 0) return std::fprintf(stderr, "dlopen_sequence: no driver\n"), 2;
  usleep(1500 * 1000);
  std::fprintf(stderr, "MARK loaded\n");
  return 0;
}
