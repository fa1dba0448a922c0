// driver_paths: one known workload, reaching the driver by the path named in argv[1]:
//   direct       exported symbols bound by the dynamic linker (built linked to libcuda)
//   dlsym        dlopen("libcuda.so.1") + dlsym of each exact ABI name
//   procaddr     as libcudart does: dlsym cuGetProcAddress_v2, everything else through it
//   procaddr_pt  the same with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (-> _ptsz/_ptds ABIs)
// It prints the exact calls per ABI it made and the memory it left live; the
// harness compares them with the shim's report.
#include <string>
#include <vector>

#include "driver_api.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s direct|dlsym|procaddr|procaddr_pt [iterations]\n", argv[0]);
    return 2;
  }
  const Path path = parse_path(argv[1]);
  const int iters = argc > 2 ? std::atoi(argv[2]) : 100;
  const bool pt = path == Path::procaddr_pt;
  std::map<std::string, unsigned long long> n;
  Resolver res(path);

  PFN_cuInit_v2000 init;
  PFN_cuMemAlloc_v3020 mem_alloc;
  PFN_cuMemFree_v3020 mem_free;
  PFN_cuMemcpyHtoD_v3020 htod;
  PFN_cuMemcpyDtoH_v3020 dtoh;
  PFN_cuMemcpyHtoDAsync_v3020 htod_async;
  PFN_cuStreamSynchronize_v2000 stream_sync;
  PFN_cuCtxSynchronize_v2000 ctx_sync;
  PFN_cuLaunchKernel_v4000 launch;
  PFN_cuMemAllocAsync_v11020 alloc_async;
  PFN_cuMemFreeAsync_v11020 free_async;
  PFN_cuMemAllocHost_v3020 alloc_host;
  PFN_cuMemFreeHost_v2000 free_host;
#define ABI(base, plain, per_thread) (pt ? per_thread : plain)
  const char* a_init = "cuInit";
  const char* a_alloc = "cuMemAlloc_v2";
  const char* a_free = "cuMemFree_v2";
  const char* a_htod = ABI("cuMemcpyHtoD", "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds");
  const char* a_dtoh = ABI("cuMemcpyDtoH", "cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2_ptds");
  const char* a_htod_async = ABI("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2_ptsz");
  const char* a_ssync = ABI("cuStreamSynchronize", "cuStreamSynchronize", "cuStreamSynchronize_ptsz");
  const char* a_csync = "cuCtxSynchronize";
  const char* a_launch = ABI("cuLaunchKernel", "cuLaunchKernel", "cuLaunchKernel_ptsz");
  const char* a_alloc_async = ABI("cuMemAllocAsync", "cuMemAllocAsync", "cuMemAllocAsync_ptsz");
  const char* a_free_async = ABI("cuMemFreeAsync", "cuMemFreeAsync", "cuMemFreeAsync_ptsz");
  const char* a_alloc_host = "cuMemAllocHost_v2";
  const char* a_free_host = "cuMemFreeHost";
  if (path == Path::direct) {
#ifdef DRIVER_PATHS_DIRECT
    init = &::cuInit;
    mem_alloc = &::cuMemAlloc_v2;
    mem_free = &::cuMemFree_v2;
    htod = &::cuMemcpyHtoD_v2;
    dtoh = &::cuMemcpyDtoH_v2;
    htod_async = &::cuMemcpyHtoDAsync_v2;
    stream_sync = &::cuStreamSynchronize;
    ctx_sync = &::cuCtxSynchronize;
    launch = &::cuLaunchKernel;
    alloc_async = &::cuMemAllocAsync;
    free_async = &::cuMemFreeAsync;
    alloc_host = &::cuMemAllocHost_v2;
    free_host = &::cuMemFreeHost;
#else
    std::fprintf(stderr, "this build is not linked to libcuda: use driver_paths_direct\n");
    return 2;
#endif
  } else {
    init = reinterpret_cast<PFN_cuInit_v2000>(res.get("cuInit", a_init));
    mem_alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(res.get("cuMemAlloc", a_alloc));
    mem_free = reinterpret_cast<PFN_cuMemFree_v3020>(res.get("cuMemFree", a_free));
    htod = reinterpret_cast<PFN_cuMemcpyHtoD_v3020>(res.get("cuMemcpyHtoD", a_htod));
    dtoh = reinterpret_cast<PFN_cuMemcpyDtoH_v3020>(res.get("cuMemcpyDtoH", a_dtoh));
    htod_async = reinterpret_cast<PFN_cuMemcpyHtoDAsync_v3020>(res.get("cuMemcpyHtoDAsync", a_htod_async));
    stream_sync = reinterpret_cast<PFN_cuStreamSynchronize_v2000>(res.get("cuStreamSynchronize", a_ssync));
    ctx_sync = reinterpret_cast<PFN_cuCtxSynchronize_v2000>(res.get("cuCtxSynchronize", a_csync, 12000));
    launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(res.get("cuLaunchKernel", a_launch));
    alloc_async = reinterpret_cast<PFN_cuMemAllocAsync_v11020>(res.get("cuMemAllocAsync", a_alloc_async));
    free_async = reinterpret_cast<PFN_cuMemFreeAsync_v11020>(res.get("cuMemFreeAsync", a_free_async));
    alloc_host = reinterpret_cast<PFN_cuMemAllocHost_v3020>(res.get("cuMemAllocHost", a_alloc_host));
    free_host = reinterpret_cast<PFN_cuMemFreeHost_v2000>(res.get("cuMemFreeHost", a_free_host));
  }

  CHECK_CU(init(0)); n[a_init]++;
  std::vector<char> host(4096, 7), back(4096, 0);
  for (int i = 0; i < iters; ++i) {
    CUdeviceptr d = 0;
    CHECK_CU(mem_alloc(&d, 4096)); n[a_alloc]++;
    CHECK_CU(htod(d, host.data(), host.size())); n[a_htod]++;
    CHECK_CU(htod_async(d, host.data(), host.size(), nullptr)); n[a_htod_async]++;
    CHECK_CU(launch(reinterpret_cast<CUfunction>(0x1), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr)); n[a_launch]++;
    CHECK_CU(stream_sync(nullptr)); n[a_ssync]++;
    CHECK_CU(dtoh(back.data(), d, back.size())); n[a_dtoh]++;
    CHECK_CU(mem_free(d)); n[a_free]++;
    CUdeviceptr a = 0;
    CHECK_CU(alloc_async(&a, 1 << 20, nullptr)); n[a_alloc_async]++;
    CHECK_CU(free_async(a, nullptr)); n[a_free_async]++;
  }
  if (back != host) {
    std::fprintf(stderr, "copy round trip lost data\n");
    return 1;
  }
  CHECK_CU(ctx_sync()); n[a_csync]++;
  // Left live on purpose: the report must show exactly these bytes.
  CUdeviceptr keep = 0;
  CHECK_CU(mem_alloc(&keep, 3 << 20)); n[a_alloc]++;
  void* pinned = nullptr;
  CHECK_CU(alloc_host(&pinned, 65536)); n[a_alloc_host]++;
  CHECK_CU(free_host(pinned)); n[a_free_host]++;
  // Peak: the 1 MiB async block or the 4 KiB block alongside the 3 MiB one never coexist
  // with it; the peak is the 3 MiB block plus nothing else.
  print_expectations(n, "\"expect_device0\": {\"live_bytes\": 3145728, \"peak_bytes\": 3145728}, "
                        "\"expect_leak\": {\"bytes\": 3145728, \"where\": \"driver_paths\"}");
  return 0;
}
