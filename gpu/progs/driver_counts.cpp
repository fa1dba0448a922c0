// driver_counts.cpp: a known driver-API workload on a real GPU, for gpu/run_gpu.sh.
//
//   driver_counts direct   [iters]  calls the exported symbols (linked with -lcuda)
//   driver_counts procaddr [iters]  dlopen("libcuda.so.1") + dlsym("cuGetProcAddress_v2"),
//                                   every other entry point through it (version 12000),
//                                   as libcudart does
// Unlike a runtime program it knows the exact ABI of every call: in `direct` mode the
// name is the cuda.h macro's expansion (cuMemAlloc -> cuMemAlloc_v2), stringified
// here so the expectation cannot drift from what the compiler bound. It prints one
// JSON line in the format of tests/progs/driver_paths.cpp:
//   {"expect_calls": {ABI: N}, "expect_device0": {...}, "expect_kinds": {...}, ...}
// The kernel is a PTX string (JIT-compiled by the driver in cuModuleLoadData).
// DRIVER_COUNTS_NO_VERIFY=1 skips the data checks: only for CPU tests against the
// test-double libcuda (tests/fakecuda), whose kernels do not run.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#define CUDASHIM_STR2(x) #x
#define CUDASHIM_STR(x) CUDASHIM_STR2(x)  // expands the cuda.h macro first: the exact ABI

#define CHECK_CU(call)                                                                     \
  do {                                                                                     \
    CUresult r_ = (call);                                                                  \
    if (r_ != CUDA_SUCCESS) {                                                              \
      std::fprintf(stderr, "driver_counts.cpp:%d: %s returned %d\n", __LINE__, #call, r_); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

namespace {

// add_one(int* p, int n): p[i] += 1 for i < n. PTX ISA 7.0 for sm_75+, JIT-compiled.
const char kPtx[] = R"(
.version 7.0
.target sm_75
.address_size 64

.visible .entry add_one(
	.param .u64 add_one_param_0,
	.param .u32 add_one_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<5>;

	ld.param.u64 	%rd1, [add_one_param_0];
	ld.param.u32 	%r2, [add_one_param_1];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.s32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r6, [%rd4];
	add.s32 	%r7, %r6, 1;
	st.global.u32 	[%rd4], %r7;

$L__BB0_2:
	ret;
}
)";

// The driver entry points the workload uses, and how they were reached.
struct Api {
  PFN_cuInit_v2000 init;
  PFN_cuDeviceGet_v2000 device_get;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_retain;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current;
  PFN_cuModuleLoadData_v2000 module_load_data;
  PFN_cuModuleGetFunction_v2000 module_get_function;
  PFN_cuModuleUnload_v2000 module_unload;
  PFN_cuStreamCreate_v2000 stream_create;
  PFN_cuStreamDestroy_v4000 stream_destroy;
  PFN_cuMemAlloc_v3020 mem_alloc;
  PFN_cuMemFree_v3020 mem_free;
  PFN_cuMemcpyHtoD_v3020 htod;
  PFN_cuMemcpyDtoH_v3020 dtoh;
  PFN_cuMemcpyHtoDAsync_v3020 htod_async;
  PFN_cuLaunchKernel_v4000 launch;
  PFN_cuStreamSynchronize_v2000 stream_sync;
  PFN_cuCtxSynchronize_v2000 ctx_sync;
  PFN_cuMemAllocAsync_v11020 alloc_async;
  PFN_cuMemFreeAsync_v11020 free_async;
  PFN_cuMemAllocHost_v3020 alloc_host;
  PFN_cuMemFreeHost_v2000 free_host;
  PFN_cuMemGetInfo_v3020 mem_get_info;
};

unsigned long long g_lookups = 0;

void* lookup(PFN_cuGetProcAddress_v12000 gpa, const char* base) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult st{};
  CHECK_CU(gpa(base, &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
  ++g_lookups;
  if (st != CU_GET_PROC_ADDRESS_SUCCESS || fn == nullptr) {
    std::fprintf(stderr, "cuGetProcAddress_v2(%s, 12000) failed (status %d)\n", base, static_cast<int>(st));
    std::exit(1);
  }
  return fn;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "direct";
  const int iters = argc > 2 ? std::atoi(argv[2]) : 50;
  Api a{};
  if (mode == "direct") {
    a.init = &::cuInit;
    a.device_get = &::cuDeviceGet;
    a.primary_retain = &::cuDevicePrimaryCtxRetain;
    a.ctx_set_current = &::cuCtxSetCurrent;
    a.module_load_data = &::cuModuleLoadData;
    a.module_get_function = &::cuModuleGetFunction;
    a.module_unload = &::cuModuleUnload;
    a.stream_create = &::cuStreamCreate;
    a.stream_destroy = &::cuStreamDestroy;
    a.mem_alloc = &::cuMemAlloc;
    a.mem_free = &::cuMemFree;
    a.htod = &::cuMemcpyHtoD;
    a.dtoh = &::cuMemcpyDtoH;
    a.htod_async = &::cuMemcpyHtoDAsync;
    a.launch = &::cuLaunchKernel;
    a.stream_sync = &::cuStreamSynchronize;
    a.ctx_sync = &::cuCtxSynchronize;
    a.alloc_async = &::cuMemAllocAsync;
    a.free_async = &::cuMemFreeAsync;
    a.alloc_host = &::cuMemAllocHost;
    a.free_host = &::cuMemFreeHost;
    a.mem_get_info = &::cuMemGetInfo;
  } else if (mode == "procaddr") {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
      return 1;
    }
    auto gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(h, "cuGetProcAddress_v2"));
    if (!gpa) {
      std::fprintf(stderr, "dlsym cuGetProcAddress_v2 failed\n");
      return 1;
    }
#define LOOKUP(field, base) a.field = reinterpret_cast<decltype(a.field)>(lookup(gpa, base))
    LOOKUP(init, "cuInit");
    LOOKUP(device_get, "cuDeviceGet");
    LOOKUP(primary_retain, "cuDevicePrimaryCtxRetain");
    LOOKUP(ctx_set_current, "cuCtxSetCurrent");
    LOOKUP(module_load_data, "cuModuleLoadData");
    LOOKUP(module_get_function, "cuModuleGetFunction");
    LOOKUP(module_unload, "cuModuleUnload");
    LOOKUP(stream_create, "cuStreamCreate");
    LOOKUP(stream_destroy, "cuStreamDestroy");
    LOOKUP(mem_alloc, "cuMemAlloc");
    LOOKUP(mem_free, "cuMemFree");
    LOOKUP(htod, "cuMemcpyHtoD");
    LOOKUP(dtoh, "cuMemcpyDtoH");
    LOOKUP(htod_async, "cuMemcpyHtoDAsync");
    LOOKUP(launch, "cuLaunchKernel");
    LOOKUP(stream_sync, "cuStreamSynchronize");
    LOOKUP(ctx_sync, "cuCtxSynchronize");
    LOOKUP(alloc_async, "cuMemAllocAsync");
    LOOKUP(free_async, "cuMemFreeAsync");
    LOOKUP(alloc_host, "cuMemAllocHost");
    LOOKUP(free_host, "cuMemFreeHost");
    LOOKUP(mem_get_info, "cuMemGetInfo");
#undef LOOKUP
  } else {
    std::fprintf(stderr, "usage: %s direct|procaddr [iterations]\n", argv[0]);
    return 2;
  }

  // Exact ABI names: what the cuda.h macros expand to (legacy default stream). For
  // procaddr, cuGetProcAddress at version 12000 answers with these same ABIs.
  const char* n_init = CUDASHIM_STR(cuInit);
  const char* n_module = CUDASHIM_STR(cuModuleLoadData);
  const char* n_stream_create = CUDASHIM_STR(cuStreamCreate);
  const char* n_stream_destroy = CUDASHIM_STR(cuStreamDestroy);
  const char* n_alloc = CUDASHIM_STR(cuMemAlloc);
  const char* n_free = CUDASHIM_STR(cuMemFree);
  const char* n_htod = CUDASHIM_STR(cuMemcpyHtoD);
  const char* n_dtoh = CUDASHIM_STR(cuMemcpyDtoH);
  const char* n_htod_async = CUDASHIM_STR(cuMemcpyHtoDAsync);
  const char* n_launch = CUDASHIM_STR(cuLaunchKernel);
  const char* n_ssync = CUDASHIM_STR(cuStreamSynchronize);
  const char* n_csync = CUDASHIM_STR(cuCtxSynchronize);
  const char* n_alloc_async = CUDASHIM_STR(cuMemAllocAsync);
  const char* n_free_async = CUDASHIM_STR(cuMemFreeAsync);
  const char* n_alloc_host = CUDASHIM_STR(cuMemAllocHost);
  const char* n_free_host = CUDASHIM_STR(cuMemFreeHost);
  const char* n_info = CUDASHIM_STR(cuMemGetInfo);

  std::map<std::string, unsigned long long> n;  // hooked ABIs (catalog/hooks.def driver rows)
  std::map<std::string, unsigned long long> other;  // driver calls cudashim does not hook
  constexpr size_t kBlock = 1u << 20, kAsyncBlock = 2u << 20, kPinned = 64u << 10, kKeep = (3u << 20) + 8192;
  constexpr int kInts = static_cast<int>(kBlock / sizeof(int));

  CHECK_CU(a.init(0)); n[n_init]++;
  CUdevice dev = 0;
  CHECK_CU(a.device_get(&dev, 0)); other["cuDeviceGet"]++;
  CUcontext ctx = nullptr;
  CHECK_CU(a.primary_retain(&ctx, dev)); other["cuDevicePrimaryCtxRetain"]++;
  CHECK_CU(a.ctx_set_current(ctx)); other["cuCtxSetCurrent"]++;
  CUmodule mod = nullptr;
  CHECK_CU(a.module_load_data(&mod, kPtx)); n[n_module]++;
  CUfunction fn = nullptr;
  CHECK_CU(a.module_get_function(&fn, mod, "add_one")); other["cuModuleGetFunction"]++;
  size_t free_b = 0, total_b = 0;
  CHECK_CU(a.mem_get_info(&free_b, &total_b)); n[n_info]++;

  const char* nv = std::getenv("DRIVER_COUNTS_NO_VERIFY");
  const bool verify = !(nv && std::strcmp(nv, "1") == 0);
  std::vector<int> host(kInts), back(kInts);
  for (int i = 0; i < kInts; ++i) host[i] = 3 * i;
  unsigned long long copy_bytes = 0;
  for (int it = 0; it < iters; ++it) {
    CUdeviceptr d = 0;
    CHECK_CU(a.mem_alloc(&d, kBlock)); n[n_alloc]++;
    CHECK_CU(a.htod(d, host.data(), kBlock)); n[n_htod]++;
    copy_bytes += kBlock;
    int count = kInts;
    void* params[] = {&d, &count};
    CHECK_CU(a.launch(fn, (kInts + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr)); n[n_launch]++;
    CHECK_CU(a.stream_sync(nullptr)); n[n_ssync]++;
    CHECK_CU(a.dtoh(back.data(), d, kBlock)); n[n_dtoh]++;
    copy_bytes += kBlock;
    for (int i = 0; verify && i < kInts; i += 4099)
      if (back[i] != host[i] + 1) {
        std::fprintf(stderr, "iteration %d: element %d is %d, expected %d\n", it, i, back[i], host[i] + 1);
        return 1;
      }
    CHECK_CU(a.mem_free(d)); n[n_free]++;
  }
  CUstream s = nullptr;
  CHECK_CU(a.stream_create(&s, CU_STREAM_NON_BLOCKING)); n[n_stream_create]++;
  for (int it = 0; it < iters / 2; ++it) {
    CUdeviceptr d = 0;
    CHECK_CU(a.alloc_async(&d, kAsyncBlock, s)); n[n_alloc_async]++;
    CHECK_CU(a.htod_async(d, host.data(), kBlock, s)); n[n_htod_async]++;
    copy_bytes += kBlock;
    int count = kInts;
    void* params[] = {&d, &count};
    CHECK_CU(a.launch(fn, (kInts + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, nullptr)); n[n_launch]++;
    CHECK_CU(a.free_async(d, s)); n[n_free_async]++;
  }
  CHECK_CU(a.stream_sync(s)); n[n_ssync]++;
  CHECK_CU(a.ctx_sync()); n[n_csync]++;
  CHECK_CU(a.stream_destroy(s)); n[n_stream_destroy]++;
  void* pinned = nullptr;
  CHECK_CU(a.alloc_host(&pinned, kPinned)); n[n_alloc_host]++;
  std::memset(pinned, 1, kPinned);
  CHECK_CU(a.free_host(pinned)); n[n_free_host]++;
  CHECK_CU(a.module_unload(mod)); other["cuModuleUnload"]++;
  // Left allocated on purpose: live and peak at exit are exactly these bytes.
  CUdeviceptr keep = 0;
  CHECK_CU(a.mem_alloc(&keep, kKeep)); n[n_alloc]++;
  if (mode == "procaddr") n["cuGetProcAddress_v2"] = g_lookups;

  auto print_map = [](const std::map<std::string, unsigned long long>& m) {
    std::printf("{");
    bool first = true;
    for (const auto& [k, v] : m) {
      std::printf("%s\"%s\": %llu", first ? "" : ", ", k.c_str(), v);
      first = false;
    }
    std::printf("}");
  };
  int drv = 0;
  cuDriverGetVersion(&drv);  // after the expectations: not part of the workload (a resolution row)
  std::printf("{\"program\": \"driver_counts\", \"mode\": \"%s\", \"pid\": %d, \"header_version\": %d, \"driver_version\": %d, "
              "\"expect_calls\": ",
              mode.c_str(), static_cast<int>(getpid()), CUDA_VERSION, drv);
  print_map(n);
  std::printf(", \"not_hooked_calls\": ");
  print_map(other);
  std::printf(", \"copy_bytes\": %llu, \"expect_device0\": {\"live_bytes\": %zu, \"peak_bytes\": %zu}", copy_bytes, kKeep,
              kKeep);
  std::printf(", \"expect_kinds\": {\"device\": {\"allocs\": %llu, \"frees\": %llu}, \"async\": {\"allocs\": %llu, \"frees\": %llu}}",
              n[n_alloc], n[n_free], n[n_alloc_async], n[n_free_async]);
  std::printf(", \"expect_host\": {\"host_pinned\": {\"allocs\": 1, \"frees\": 1}}}\n");
  std::fflush(stdout);
  return 0;
}
