// runtime_paths: a program linked to libcudart (the test double of it), calling
// the runtime API the way torch does: through the PLT, so the shim's runtime rows
// see each call, and the runtime reaches the driver through cuGetProcAddress_v2,
// so the driver rows see it again. Each ABI must be counted exactly, and memory
// once (the ledger is kept at the driver level only).
#include <cuda_runtime_api.h>

#include <map>
#include <string>
#include <vector>

#include "driver_api.h"
#include "runtime_check.h"
#include "fake_truth.h"


int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 50;
  std::map<std::string, unsigned long long> n;
  std::vector<char> host(1 << 16, 3), back(1 << 16, 0);
  cudaStream_t s = nullptr;
  CHECK_RT(cudaStreamCreate(&s));
  for (int i = 0; i < iters; ++i) {
    void* d = nullptr;
    CHECK_RT(cudaMalloc(&d, 1 << 20)); n["cudaMalloc"]++;
    CHECK_RT(cudaMemcpy(d, host.data(), host.size(), cudaMemcpyHostToDevice)); n["cudaMemcpy"]++;
    CHECK_RT(cudaMemcpyAsync(back.data(), d, back.size(), cudaMemcpyDeviceToHost, s)); n["cudaMemcpyAsync"]++;
    CHECK_RT(cudaStreamSynchronize(s)); n["cudaStreamSynchronize"]++;
    CHECK_RT(cudaFree(d)); n["cudaFree"]++;
  }
  CHECK_RT(cudaDeviceSynchronize()); n["cudaDeviceSynchronize"]++;
  void* pinned = nullptr;
  CHECK_RT(cudaMallocHost(&pinned, 4096)); n["cudaMallocHost"]++;
  CHECK_RT(cudaFreeHost(pinned)); n["cudaFreeHost"]++;
  void* keep = nullptr;
  CHECK_RT(cudaMalloc(&keep, 2 << 20)); n["cudaMalloc"]++;
  CHECK_RT(cudaStreamDestroy(s));
  if (back != host) {
    std::fprintf(stderr, "round trip lost data\n");
    return 1;
  }
  add_driver_truth(n);
  // The runtime rows nest over driver rows: if memory were counted at both levels,
  // live bytes would read 4 MiB. The leak is the driver's allocation made under cudaMalloc:
  // it must be reported at this program's call of cudaMalloc, not at an unknown site.
  print_expectations(n, "\"expect_device0\": {\"live_bytes\": 2097152, \"peak_bytes\": 2097152}, "
                        "\"expect_leak\": {\"bytes\": 2097152, \"where\": \"runtime_paths\", \"api\": \"cudaMalloc\"}");
  return 0;
}
