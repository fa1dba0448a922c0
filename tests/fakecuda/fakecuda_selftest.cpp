// Self test of the fake driver and runtime. Loads both with dlopen through LD_LIBRARY_PATH (the
// CTest entry sets it to FAKECUDA_DIR), checks cuGetProcAddress semantics, the control API, data
// movement and memory accounting, then that the fake cudart reaches the driver through
// cuGetProcAddress_v2. Prints every failed check; exits 1 when any failed.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/fakecuda/fakecuda_control.h"

// A decoy definition exported by this executable (ENABLE_EXPORTS), the way a preloaded shim would
// define it: the driver must neither call it nor hand out its address.
extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr*, size_t) {
  std::fprintf(stderr, "FAIL: the fake driver reached the executable's decoy cuMemAlloc_v2\n");
  std::abort();
}

namespace {

int g_failures = 0;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      ++g_failures;                                                        \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                   \
      std::fputc('\n', stderr);                                            \
    }                                                                      \
  } while (0)

void* g_driver = nullptr;
PFN_cuGetProcAddress_v12000 g_gpa = nullptr;
fakecuda_call_count_fn g_count = nullptr;

// dlsym in the fake driver; a missing symbol is a failure (and nullptr).
template <class T = void*>
T sym(const char* name) {
  void* p = dlsym(g_driver, name);
  CHECK(p != nullptr, "libcuda.so.1 does not export %s", name);
  return reinterpret_cast<T>(p);
}

// cuGetProcAddress_v2 answer: result, pointer, status.
struct Answer {
  CUresult res;
  void* fn;
  CUdriverProcAddressQueryResult status;
};
Answer ask(const char* symbol, int version, cuuint64_t flags) {
  Answer a{CUDA_SUCCESS, reinterpret_cast<void*>(1), CU_GET_PROC_ADDRESS_SUCCESS};
  a.res = g_gpa(symbol, &a.fn, version, flags, &a.status);
  return a;
}

// cuGetProcAddress_v2(symbol, version, flags) succeeds with exactly dlsym(driver, abi).
void expect_resolves(const char* symbol, int version, cuuint64_t flags, const char* abi) {
  Answer a = ask(symbol, version, flags);
  void* want = dlsym(g_driver, abi);
  CHECK(a.res == CUDA_SUCCESS && a.status == CU_GET_PROC_ADDRESS_SUCCESS && a.fn == want && want != nullptr,
        "%s @%d flags %llu: res %d status %d fn %p, want %s = %p", symbol, version,
        static_cast<unsigned long long>(flags), a.res, a.status, a.fn, abi, want);
}

void test_proc_address() {
  expect_resolves("cuMemAlloc", 12000, CU_GET_PROC_ADDRESS_DEFAULT, "cuMemAlloc_v2");
  expect_resolves("cuMemAlloc", 2000, CU_GET_PROC_ADDRESS_DEFAULT, "cuMemAlloc");
  expect_resolves("cuStreamSynchronize", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                  "cuStreamSynchronize_ptsz");
  expect_resolves("cuStreamSynchronize", 12000, CU_GET_PROC_ADDRESS_DEFAULT, "cuStreamSynchronize");
  expect_resolves("cuStreamSynchronize", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuStreamSynchronize");
  expect_resolves("cuStreamSynchronize", 6050, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuStreamSynchronize");
  expect_resolves("cuMemcpyHtoD", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyHtoD_v2_ptds");
  expect_resolves("cuMemAlloc", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemAlloc_v2");
  expect_resolves("cuGetProcAddress", 12000, CU_GET_PROC_ADDRESS_DEFAULT, "cuGetProcAddress_v2");
  expect_resolves("cuGetProcAddress", 11030, CU_GET_PROC_ADDRESS_DEFAULT, "cuGetProcAddress");
  expect_resolves("cuCtxCreate", 12090, CU_GET_PROC_ADDRESS_DEFAULT, "cuCtxCreate_v4");
  expect_resolves("cuCtxCreate", 11040, CU_GET_PROC_ADDRESS_DEFAULT, "cuCtxCreate_v3");
  expect_resolves("cuCtxSynchronize", 12090, CU_GET_PROC_ADDRESS_DEFAULT, "cuCtxSynchronize");
#if CUDA_VERSION >= 13000
  expect_resolves("cuCtxSynchronize", 13000, CU_GET_PROC_ADDRESS_DEFAULT, "cuCtxSynchronize_v2");
#endif
  expect_resolves("cuIpcOpenMemHandle", 11000, CU_GET_PROC_ADDRESS_DEFAULT, "cuIpcOpenMemHandle_v2");
  expect_resolves("cuIpcOpenMemHandle", 10020, CU_GET_PROC_ADDRESS_DEFAULT, "cuIpcOpenMemHandle");
  expect_resolves("cuEventElapsedTime", 12080, CU_GET_PROC_ADDRESS_DEFAULT, "cuEventElapsedTime_v2");

  Answer unknown = ask("cuNoSuchFunction", 13000, CU_GET_PROC_ADDRESS_DEFAULT);
  CHECK(unknown.res == CUDA_ERROR_NOT_FOUND && unknown.fn == nullptr &&
            unknown.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
        "unknown symbol: res %d fn %p status %d", unknown.res, unknown.fn, unknown.status);
  Answer old = ask("cuMemAllocAsync", 11000, CU_GET_PROC_ADDRESS_DEFAULT);
  CHECK(
      old.res == CUDA_ERROR_NOT_FOUND && old.fn == nullptr && old.status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
      "cuMemAllocAsync@11000: res %d fn %p status %d", old.res, old.fn, old.status);
  void* fn = nullptr;
  CHECK(g_gpa("cuInit", &fn, 12000, 0, nullptr) == CUDA_SUCCESS && fn == dlsym(g_driver, "cuInit"),
        "NULL symbolStatus must be accepted");

  auto gpa4 = sym<PFN_cuGetProcAddress_v11030>("cuGetProcAddress");
  fn = nullptr;
  CHECK(gpa4 && gpa4("cuMemFree", &fn, 12000, 0) == CUDA_SUCCESS && fn == dlsym(g_driver, "cuMemFree_v2"),
        "4-argument cuGetProcAddress(cuMemFree) gave %p", fn);
  CHECK(gpa4 && gpa4("cuNoSuchFunction", &fn, 12000, 0) == CUDA_ERROR_NOT_FOUND && fn == nullptr,
        "4-argument cuGetProcAddress(unknown)");

  // The decoy in this executable must not leak out of the driver.
  Answer alloc = ask("cuMemAlloc", 12000, CU_GET_PROC_ADDRESS_DEFAULT);
  CHECK(alloc.fn != reinterpret_cast<void*>(&cuMemAlloc_v2), "cuGetProcAddress returned the executable's decoy");

  // Every row of the table: exported, and what the row's own version resolves to. (Rows are
  // stringified directly: cuda.h #defines several base names, e.g. cuMemcpyHtoD.)
#define FAKECUDA_ABI(base, abi, version) expect_resolves(#base, version, CU_GET_PROC_ADDRESS_DEFAULT, #abi);
#define FAKECUDA_ABI_PT(base, abi, version, pt_abi, pt_version, pt_suffix)                                           \
  expect_resolves(#base, version, CU_GET_PROC_ADDRESS_DEFAULT, #abi);                                                \
  expect_resolves(#base, pt_version > version ? pt_version : version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, \
                  #pt_abi);
#include "tests/fakecuda/fakecuda_symbols.inc"
#undef FAKECUDA_ABI
#undef FAKECUDA_ABI_PT
}

void test_counts_and_delay() {
  auto reset = sym<fakecuda_reset_counts_fn>("fakecuda_reset_counts");
  auto set_delay = sym<fakecuda_set_sync_delay_ns_fn>("fakecuda_set_sync_delay_ns");
  auto query = sym<PFN_cuStreamQuery_v2000>("cuStreamQuery");
  auto query_ptsz = sym<PFN_cuStreamQuery_v7000_ptsz>("cuStreamQuery_ptsz");
  auto ctx_sync = sym<PFN_cuCtxSynchronize_v2000>("cuCtxSynchronize");
  if (!reset || !set_delay || !query || !query_ptsz || !ctx_sync) return;

  reset();
  for (int i = 0; i < 3; ++i) CHECK(query(nullptr) == CUDA_SUCCESS, "cuStreamQuery");
  CHECK(query_ptsz(CU_STREAM_PER_THREAD) == CUDA_SUCCESS, "cuStreamQuery_ptsz");
  CHECK(g_count("cuStreamQuery") == 3, "cuStreamQuery count %llu", (unsigned long long)g_count("cuStreamQuery"));
  CHECK(g_count("cuStreamQuery_ptsz") == 1, "cuStreamQuery_ptsz count");
  CHECK(g_count("cuNoSuchFunction") == 0 && g_count(nullptr) == 0, "unknown names count 0");
  reset();
  CHECK(g_count("cuStreamQuery") == 0, "reset clears counts");

  set_delay(2'000'000);
  auto t0 = std::chrono::steady_clock::now();
  CHECK(ctx_sync() == CUDA_SUCCESS, "cuCtxSynchronize");
  auto waited = std::chrono::steady_clock::now() - t0;
  CHECK(waited >= std::chrono::milliseconds(2), "cuCtxSynchronize took %lld us with a 2 ms delay",
        (long long)std::chrono::duration_cast<std::chrono::microseconds>(waited).count());
  set_delay(0);
  CHECK(g_count("cuCtxSynchronize") == 1, "cuCtxSynchronize count");
}

void test_memory() {
  auto init = sym<PFN_cuInit_v2000>("cuInit");
  auto alloc = sym<PFN_cuMemAlloc_v3020>("cuMemAlloc_v2");
  auto mem_free = sym<PFN_cuMemFree_v3020>("cuMemFree_v2");
  auto htod = sym<PFN_cuMemcpyHtoD_v3020>("cuMemcpyHtoD_v2");
  auto dtoh = sym<PFN_cuMemcpyDtoH_v3020>("cuMemcpyDtoH_v2");
  auto htod_async = sym<PFN_cuMemcpyHtoDAsync_v7000_ptsz>("cuMemcpyHtoDAsync_v2_ptsz");
  auto memset32 = sym<PFN_cuMemsetD32_v3020>("cuMemsetD32_v2");
  auto copy2d = sym<PFN_cuMemcpy2D_v3020>("cuMemcpy2D_v2");
  auto info = sym<PFN_cuMemGetInfo_v3020>("cuMemGetInfo_v2");
  auto alloc_host = sym<PFN_cuMemAllocHost_v3020>("cuMemAllocHost_v2");
  auto free_host = sym<PFN_cuMemFreeHost_v2000>("cuMemFreeHost");
  auto attr = sym<PFN_cuPointerGetAttribute_v4000>("cuPointerGetAttribute");
  auto ipc_get = sym<PFN_cuIpcGetMemHandle_v4010>("cuIpcGetMemHandle");
  auto ipc_open = sym<PFN_cuIpcOpenMemHandle_v11000>("cuIpcOpenMemHandle_v2");
  auto export_table = sym<PFN_cuGetExportTable_v3000>("cuGetExportTable");
  if (!init || !alloc || !mem_free || !htod || !dtoh || !htod_async || !memset32 || !copy2d || !info || !alloc_host ||
      !free_host || !attr || !ipc_get || !ipc_open || !export_table)
    return;
  CHECK(init(0) == CUDA_SUCCESS, "cuInit");

  // Round trips really move bytes.
  unsigned char src[256], back[256];
  for (int i = 0; i < 256; ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  std::memset(back, 0, sizeof back);
  CUdeviceptr d = 0;
  CHECK(alloc(&d, sizeof src) == CUDA_SUCCESS && d != 0, "cuMemAlloc_v2");
  if (d == 0) return;
  CHECK(htod(d, src, sizeof src) == CUDA_SUCCESS, "cuMemcpyHtoD_v2");
  CHECK(dtoh(back, d, sizeof back) == CUDA_SUCCESS, "cuMemcpyDtoH_v2");
  CHECK(std::memcmp(src, back, sizeof src) == 0, "HtoD + DtoH round trip changed the bytes");
  CHECK(g_count("cuMemcpyHtoD_v2") >= 1 && g_count("cuMemcpyDtoH_v2") >= 1, "copy counts");

  unsigned char ones[16];
  std::memset(ones, 1, sizeof ones);
  CHECK(htod_async(d + 16, ones, sizeof ones, CU_STREAM_PER_THREAD) == CUDA_SUCCESS, "async HtoD");
  CHECK(memset32(d, 0xdeadbeefu, 2) == CUDA_SUCCESS, "cuMemsetD32_v2");
  CHECK(dtoh(back, d, 32) == CUDA_SUCCESS, "cuMemcpyDtoH_v2");
  unsigned int word = 0;
  std::memcpy(&word, back + 4, 4);
  CHECK(word == 0xdeadbeefu && back[8] == src[8] && back[16] == 1 && back[31] == 1, "memset/async copy bytes");

  // 2D: two rows of 4 bytes from a host buffer of pitch 8 into device rows of pitch 16.
  unsigned char host2d[16];
  for (int i = 0; i < 16; ++i) host2d[i] = static_cast<unsigned char>(100 + i);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host2d;
  c.srcPitch = 8;
  c.srcXInBytes = 2;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = d;
  c.dstPitch = 16;
  c.WidthInBytes = 4;
  c.Height = 2;
  CHECK(copy2d(&c) == CUDA_SUCCESS, "cuMemcpy2D_v2");
  CHECK(dtoh(back, d, 32) == CUDA_SUCCESS, "cuMemcpyDtoH_v2");
  CHECK(back[0] == 102 && back[3] == 105 && back[16] == 110 && back[19] == 113, "2D copy bytes");

  // Pointer attributes.
  unsigned int type = 0;
  CHECK(attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 10) == CUDA_SUCCESS && type == CU_MEMORYTYPE_DEVICE,
        "memory type of device memory: %u", type);
  void* pinned = nullptr;
  CHECK(alloc_host(&pinned, 4096) == CUDA_SUCCESS && pinned != nullptr, "cuMemAllocHost_v2");
  CHECK(attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pinned))) ==
                CUDA_SUCCESS &&
            type == CU_MEMORYTYPE_HOST,
        "memory type of pinned memory: %u", type);
  int on_stack = 0;
  CHECK(attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
             static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(&on_stack))) == CUDA_ERROR_INVALID_VALUE,
        "memory type of unknown memory");
  int ordinal = -1;
  CHECK(attr(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d) == CUDA_SUCCESS && ordinal == 0, "device ordinal");
  CHECK(free_host(pinned) == CUDA_SUCCESS, "cuMemFreeHost");

  // IPC handles carry the pointer.
  CUipcMemHandle handle;
  CUdeviceptr opened = 0;
  CHECK(ipc_get(&handle, d) == CUDA_SUCCESS && ipc_open(&opened, handle, 0) == CUDA_SUCCESS && opened == d,
        "IPC round trip gave %llx for %llx", (unsigned long long)opened, (unsigned long long)d);
  CHECK(mem_free(d) == CUDA_SUCCESS, "cuMemFree_v2");
  CHECK(mem_free(d) == CUDA_ERROR_INVALID_VALUE, "double cuMemFree_v2 must fail");

  // cuMemGetInfo_v2 accounting; NULL out-parameters are tolerated.
  size_t free0 = 0, total = 0, free1 = 0, free2 = 0;
  CHECK(info(&free0, &total) == CUDA_SUCCESS && total > 0 && free0 <= total, "cuMemGetInfo_v2");
  const size_t kBytes = 3u << 20;
  CUdeviceptr big = 0;
  CHECK(alloc(&big, kBytes) == CUDA_SUCCESS, "cuMemAlloc_v2(3 MiB)");
  CHECK(info(&free1, nullptr) == CUDA_SUCCESS && free1 == free0 - kBytes, "free after alloc %zu, before %zu", free1,
        free0);
  CHECK(info(nullptr, &total) == CUDA_SUCCESS && info(nullptr, nullptr) == CUDA_SUCCESS, "NULL out-parameters");
  CHECK(mem_free(big) == CUDA_SUCCESS, "cuMemFree_v2(big)");
  CHECK(info(&free2, nullptr) == CUDA_SUCCESS && free2 == free0, "free after release %zu, want %zu", free2, free0);

  // The legacy 32-bit ABI hands out addresses below 4 GiB that work like any other.
  using LegacyAlloc = CUresult (*)(unsigned int*, unsigned int);
  using LegacyFree = CUresult (*)(unsigned int);
  auto alloc32 = sym<LegacyAlloc>("cuMemAlloc");
  auto free32 = sym<LegacyFree>("cuMemFree");
  unsigned int d32 = 0;
  if (alloc32 && free32) {
    CHECK(alloc32(&d32, 64) == CUDA_SUCCESS && d32 != 0, "cuMemAlloc (v1)");
    CHECK(d32 == 0 || (htod(d32, src, 64) == CUDA_SUCCESS && dtoh(back, d32, 64) == CUDA_SUCCESS &&
                       std::memcmp(src, back, 64) == 0),
          "copies through a cuMemAlloc (v1) pointer");
    CHECK(free32(d32) == CUDA_SUCCESS, "cuMemFree (v1)");
  }

  const void* table = reinterpret_cast<const void*>(1);
  CUuuid id{};
  CHECK(export_table(&table, &id) == CUDA_ERROR_NOT_SUPPORTED && table == nullptr, "cuGetExportTable");
}

// The fake runtime reaches the driver through cuGetProcAddress_v2.
void test_runtime() {
  void* rt = dlopen(FAKECUDART_SONAME, RTLD_NOW);
  CHECK(rt != nullptr, "dlopen(%s): %s", FAKECUDART_SONAME, dlerror());
  if (rt == nullptr) return;
  auto cuda_malloc = reinterpret_cast<decltype(&cudaMalloc)>(dlsym(rt, "cudaMalloc"));
  auto cuda_free = reinterpret_cast<decltype(&cudaFree)>(dlsym(rt, "cudaFree"));
  auto cuda_memcpy_ptds = reinterpret_cast<decltype(&cudaMemcpy)>(dlsym(rt, "cudaMemcpy_ptds"));
  auto runtime_version = reinterpret_cast<decltype(&cudaRuntimeGetVersion)>(dlsym(rt, "cudaRuntimeGetVersion"));
  auto entry_point =
      reinterpret_cast<decltype(&cudaGetDriverEntryPointByVersion)>(dlsym(rt, "cudaGetDriverEntryPointByVersion"));
  CHECK(cuda_malloc && cuda_free && cuda_memcpy_ptds && runtime_version && entry_point, "runtime exports");
  if (!cuda_malloc || !cuda_free || !cuda_memcpy_ptds || !runtime_version || !entry_point) return;

  uint64_t before = g_count("cuMemAlloc_v2");
  void* p = nullptr;
  CHECK(cuda_malloc(&p, 256) == cudaSuccess && p != nullptr, "cudaMalloc");
  CHECK(g_count("cuMemAlloc_v2") == before + 1, "cudaMalloc did not reach cuMemAlloc_v2 (%llu -> %llu)",
        (unsigned long long)before, (unsigned long long)g_count("cuMemAlloc_v2"));
  CHECK(g_count("cuGetProcAddress_v2") > 0, "cudart did not use cuGetProcAddress_v2");

  uint64_t ptds_before = g_count("cuMemcpyHtoD_v2_ptds");
  char hello[] = "hello";
  CHECK(cuda_memcpy_ptds(p, hello, sizeof hello, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy_ptds");
  CHECK(g_count("cuMemcpyHtoD_v2_ptds") == ptds_before + 1, "cudaMemcpy_ptds did not reach cuMemcpyHtoD_v2_ptds");
  CHECK(std::strcmp(static_cast<const char*>(p), "hello") == 0, "cudaMemcpy_ptds bytes");
  CHECK(cuda_free(p) == cudaSuccess, "cudaFree");

  int v = 0;
  CHECK(runtime_version(&v) == cudaSuccess && v == CUDA_VERSION, "cudaRuntimeGetVersion %d", v);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  CHECK(entry_point("cuMemAlloc", &fn, CUDA_VERSION, cudaEnableDefault, &status) == cudaSuccess &&
            status == cudaDriverEntryPointSuccess && fn == dlsym(g_driver, "cuMemAlloc_v2"),
        "cudaGetDriverEntryPointByVersion(cuMemAlloc)");
  CHECK(entry_point("cuNoSuchFunction", &fn, CUDA_VERSION, cudaEnableDefault, &status) == cudaSuccess &&
            status == cudaDriverEntryPointSymbolNotFound && fn == nullptr,
        "cudaGetDriverEntryPointByVersion(unknown)");
}

}  // namespace

int main() {
  g_driver = dlopen("libcuda.so.1", RTLD_NOW);
  if (g_driver == nullptr) {
    std::fprintf(stderr, "FAIL: dlopen(libcuda.so.1): %s (is FAKECUDA_DIR on LD_LIBRARY_PATH?)\n", dlerror());
    return 1;
  }
  g_count = reinterpret_cast<fakecuda_call_count_fn>(dlsym(g_driver, "fakecuda_call_count"));
  g_gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(g_driver, "cuGetProcAddress_v2"));
  if (g_count == nullptr || g_gpa == nullptr) {
    std::fprintf(stderr, "FAIL: the libcuda.so.1 found is not the fake driver (no fakecuda_call_count)\n");
    return 1;
  }
  test_proc_address();
  test_counts_and_delay();
  test_memory();
  test_runtime();
  if (g_failures != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("fakecuda selftest: all checks passed (cuda.h %d)\n", CUDA_VERSION);
  return 0;
}
