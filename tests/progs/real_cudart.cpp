// real_cudart: NVIDIA's own libcudart (12.9 or 13.0, path in argv[1]) against the
// test-double driver. Real cudart stops at cuGetExportTable, which a double cannot
// satisfy; until then every driver lookup it makes must pass through the shim:
// the double's own count of each hooked ABI (cuGetProcAddress_v2, cuInit, ...)
// must equal the shim's.
#include <map>
#include <string>

#include "driver_api.h"
#include "fake_truth.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s /path/to/libcudart.so.N\n", argv[0]);
    return 2;
  }
  void* rt = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (rt == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  // More runtimes in the same process (argv[2], ...): the live inventory must see each.
  for (int i = 2; i < argc; ++i)
    if (dlopen(argv[i], RTLD_NOW | RTLD_LOCAL) == nullptr) {
      std::fprintf(stderr, "cannot load %s: %s\n", argv[i], dlerror());
      return 2;
    }
  using GetCount = int (*)(int*);
  using RtVersion = int (*)(int*);
  auto get_count = reinterpret_cast<GetCount>(dlsym(rt, "cudaGetDeviceCount"));
  auto rt_version = reinterpret_cast<RtVersion>(dlsym(rt, "cudaRuntimeGetVersion"));
  int version = 0, count = -1;
  rt_version(&version);
  const int err = get_count(&count);  // expected to fail at cuGetExportTable
  std::map<std::string, unsigned long long> n;
  add_driver_truth(n);
  std::fprintf(stderr, "real_cudart: runtime %d, cudaGetDeviceCount -> %d\n", version, err);
  char extra[128];
  std::snprintf(extra, sizeof extra, "\"runtime_version\": %d", version);
  print_expectations(n, extra);
  return 0;
}
