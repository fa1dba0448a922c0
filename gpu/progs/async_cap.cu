// async_cap.cu: the stream-ordered allocator under a cudashim cap. Allocates 1 GiB
// blocks with cudaMallocAsync until one fails, then frees them. Prints one JSON line.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

int main() {
  cudaStream_t s;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return 2;
  std::vector<void*> blocks;
  cudaError_t last = cudaSuccess;
  for (int i = 0; i < 16; ++i) {
    void* p = nullptr;
    last = cudaMallocAsync(&p, size_t{1} << 30, s);
    if (last != cudaSuccess) break;
    blocks.push_back(p);
  }
  const cudaError_t sync = cudaStreamSynchronize(s);
  for (void* p : blocks) cudaFreeAsync(p, s);
  cudaStreamSynchronize(s);
  std::printf("{\"blocks\": %zu, \"error\": %d, \"error_name\": \"%s\", \"sync\": %d}\n", blocks.size(), (int)last,
              cudaGetErrorName(last), (int)sync);
  return 0;
}
