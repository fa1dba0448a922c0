// live_inventory: what the library watcher must see while a program runs.
//   live_inventory CUDART_PATH CUDART_SONAME [FATBIN_SECTION_FILE]
// 1. dlopen CUDART_PATH by its full path and call into it (the shim starts its
//    event stream); ask the driver for an entry point through cuGetProcAddress_v2
//    from this program itself, as a statically linked CUDA runtime does (with
//    cudaVersion 13000); load device code: a PTX text and each fatbin container
//    of FATBIN_SECTION_FILE (a .nv_fatbin section dumped by objcopy), as cudart
//    registers them. Wait 1.5 s, print "MARK first".
// 2. dlopen CUDART_SONAME by name (found through LD_LIBRARY_PATH), wait 1.5 s,
//    print "MARK second", exit 0.
// The test (tests/preload/live_inventory.py) checks which finding lines came
// before which mark, and what the report and the event stream say.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

template <typename F>
F sym(void* h, const char* name) {
  auto f = reinterpret_cast<F>(dlsym(h, name));
  if (f == nullptr) {
    std::fprintf(stderr, "live_inventory: no %s: %s\n", name, dlerror());
    std::exit(2);
  }
  return f;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CUDART_PATH CUDART_SONAME [FATBIN_SECTION_FILE]\n", argv[0]);
    return 2;
  }
  void* rt = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (rt == nullptr) return std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror()), 2;
  int count = 0;
  sym<int (*)(int*)>(rt, "cudaGetDeviceCount")(&count);  // fails at cuGetExportTable against the double: fine

  void* cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (cu == nullptr) return std::fprintf(stderr, "no libcuda.so.1: %s\n", dlerror()), 2;
  auto gpa = sym<PFN_cuGetProcAddress_v12000>(cu, "cuGetProcAddress_v2");
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (gpa("cuInit", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || fn == nullptr)
    return std::fprintf(stderr, "cuGetProcAddress_v2(cuInit) failed\n"), 1;
  reinterpret_cast<PFN_cuInit_v2000>(fn)(0);
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  sym<PFN_cuDeviceGet_v2000>(cu, "cuDeviceGet")(&dev, 0);
  sym<PFN_cuDevicePrimaryCtxRetain_v7000>(cu, "cuDevicePrimaryCtxRetain")(&ctx, dev);
  sym<PFN_cuCtxSetCurrent_v4000>(cu, "cuCtxSetCurrent")(ctx);
  auto load = sym<PFN_cuModuleLoadData_v2000>(cu, "cuModuleLoadData");

  // PTX for a virtual architecture: always JIT-compiled. 64 KiB of it.
  std::string ptx = ".version 8.0\n.target sm_80\n.address_size 64\n";
  while (ptx.size() < 65536) ptx += "// padding: the size the JIT must compile\n";
  CUmodule mod = nullptr;
  if (load(&mod, ptx.c_str()) != CUDA_SUCCESS) return std::fprintf(stderr, "PTX load failed\n"), 1;
  int containers = 0;
  if (argc > 3) {
    std::ifstream f(argv[3], std::ios::binary);
    const std::vector<char> sec((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (size_t off = 0; off + 16 <= sec.size();) {
      uint32_t magic;
      uint16_t hdr;
      uint64_t size;
      std::memcpy(&magic, sec.data() + off, 4);
      std::memcpy(&hdr, sec.data() + off + 6, 2);
      std::memcpy(&size, sec.data() + off + 8, 8);
      if (magic != 0xBA55ED50u) break;
      std::vector<char> image(sec.begin() + off, sec.begin() + off + hdr + size);  // its own copy, 8-aligned
      if (load(&mod, image.data()) != CUDA_SUCCESS) return std::fprintf(stderr, "fatbin load failed\n"), 1;
      ++containers;
      off += (hdr + size + 7) & ~uint64_t(7);
    }
  }
  std::fprintf(stderr, "live_inventory: %d fatbin containers loaded\n", containers);
  usleep(1500 * 1000);
  std::fprintf(stderr, "MARK first\n");
  if (dlopen(argv[2], RTLD_NOW | RTLD_LOCAL) == nullptr) return std::fprintf(stderr, "cannot load %s: %s\n", argv[2], dlerror()), 2;
  usleep(1500 * 1000);
  std::fprintf(stderr, "MARK second\n");
  return 0;
}
