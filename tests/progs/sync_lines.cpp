// sync_lines: the read-back habit (.item() in C++) in a function of its own, built
// with -g, so that `cudashim report` can name this file and the line of each call
// after the process is gone (tests/preload/native_lines.py). read_loss is not
// exported: only .symtab or DWARF can name it, never dladdr.
#include <cuda_runtime_api.h>

#include <cstdio>

#include "runtime_check.h"

namespace {

__attribute__((noinline)) int read_loss(void* dev, cudaStream_t stream, float* loss) {
  float value = 0;  // pageable stack memory: the async copy below runs synchronously
  CHECK_RT(cudaMemcpyAsync(&value, dev, sizeof value, cudaMemcpyDeviceToHost, stream));  // LINE:copy
  CHECK_RT(cudaStreamSynchronize(stream));  // LINE:sync
  *loss += value;
  return 0;
}

}  // namespace

int main() {
  constexpr int kSteps = 40;
  void* dev = nullptr;
  CHECK_RT(cudaMalloc(&dev, 4096));
  cudaStream_t stream = nullptr;
  CHECK_RT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float loss = 0;
  for (int s = 0; s < kSteps; ++s)
    if (read_loss(dev, stream, &loss) != 0) return 1;
  CHECK_RT(cudaStreamDestroy(stream));
  CHECK_RT(cudaFree(dev));
  std::printf("{\"steps\": %d, \"loss\": %g}\n", kSteps, loss);
  return 0;
}
