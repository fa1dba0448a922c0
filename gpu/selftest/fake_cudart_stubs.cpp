// fake_cudart_stubs.cpp: CPU self-test only (gpu/selftest_cpu.sh). The test-double
// libcudart.so.13 (tests/fakecuda) exports the cuda* API but not the entry points an
// nvcc-built program also imports: the fatbin registration, the <<<>>> launch stub's
// __cudaPushCallConfiguration / __cudaPopCallConfiguration / __cudaGetKernel /
// __cudaLaunchKernel, cudaGetDeviceCount and cudaSetDevice. Preloaded after
// libcudashim.so, this library supplies them (version node libcudart.so.13), so that
// the real gpu/progs/cuda_counts.cu binary built with -cudart shared runs on a machine
// without a GPU. __cudaLaunchKernel reaches the driver as the real libcudart does:
// dlopen("libcuda.so.1") + cuGetProcAddress_v2 for cuLaunchKernel.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstddef>

namespace {
dim3 g_grid, g_block;
size_t g_shared = 0;
void* g_stream = nullptr;
void* g_handle[4];

PFN_cuLaunchKernel_v4000 driver_launch() {
  static PFN_cuLaunchKernel_v4000 fn = [] {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    auto gpa = h ? reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(h, "cuGetProcAddress_v2")) : nullptr;
    void* f = nullptr;
    CUdriverProcAddressQueryResult st{};
    if (gpa) gpa("cuLaunchKernel", &f, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    return reinterpret_cast<PFN_cuLaunchKernel_v4000>(f);
  }();
  return fn;
}
}  // namespace

extern "C" {
void** __cudaRegisterFatBinary(void*) { return g_handle; }
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*) {}
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void* stream) {
  g_grid = grid;
  g_block = block;
  g_shared = shared;
  g_stream = stream;
  return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, void* stream) {
  *grid = g_grid;
  *block = g_block;
  *shared = g_shared;
  *static_cast<void**>(stream) = g_stream;
  return cudaSuccess;
}
cudaError_t __cudaGetKernel(cudaKernel_t* k, const void* f) {
  *k = reinterpret_cast<cudaKernel_t>(const_cast<void*>(f));
  return cudaSuccess;
}
cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream) {
  auto launch = driver_launch();
  if (!launch) return cudaErrorUnknown;
  const CUresult r = launch(reinterpret_cast<CUfunction>(0x1), grid.x, grid.y, grid.z, block.x, block.y, block.z,
                            static_cast<unsigned>(shared), reinterpret_cast<CUstream>(stream), args, nullptr);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}
cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int) { return cudaSuccess; }
}
