// version_probe: a program that loads a CUDA-family library it never calls, as a libtorch
// C++ program loads cuDNN for an MLP.
//   version_probe LIBRARY_PATH [SECONDS]
// Calls cuInit through the driver (the shim's event stream starts), dlopens LIBRARY_PATH,
// waits SECONDS (default 1.5: the library watcher re-reads the inventory within a
// second), exits 0.
#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: version_probe LIBRARY_PATH [SECONDS]\n");
    return 2;
  }
  void* drv = dlopen("libcuda.so.1", RTLD_NOW);
  auto init = drv ? reinterpret_cast<CUresult (*)(unsigned)>(dlsym(drv, "cuInit")) : nullptr;
  if (init == nullptr || init(0) != CUDA_SUCCESS) {
    std::fprintf(stderr, "version_probe: no driver (LD_LIBRARY_PATH?)\n");
    return 3;
  }
  if (dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == nullptr) {
    std::fprintf(stderr, "version_probe: %s\n", dlerror());
    return 3;
  }
  const double seconds = argc == 3 ? std::atof(argv[2]) : 1.5;
  usleep(static_cast<useconds_t>(seconds * 1e6));
  std::printf("version_probe: done\n");
  return 0;
}
