// sync_patterns.cu: the bundled example. A small training-loop-shaped CUDA
// program that contains, on purpose, the habits cudashim flags:
//   - cudaMalloc/cudaFree of a scratch buffer in every step (allocator churn;
//     cudaFree synchronizes the whole device);
//   - a 4-byte device-to-host read-back of a "loss" every step, followed by a sync
//     (what .item() does);
//   - cudaDeviceSynchronize inside the steady-state loop;
//   - cudaMemcpyAsync from pageable host memory (it runs synchronously);
//   - all of it on the legacy default stream.
// Run it as `cudashim run -- examples/sync_patterns` (README, Quick start).
// On a machine with no GPU or no driver it says so plainly and exits 0.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

__global__ void step_kernel(float* w, const float* x, float* loss, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float g = w[i] * x[i] - 1.0f;
    w[i] -= 0.01f * g * x[i];
    if (i == 0) *loss = g * g;
  }
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) {
    std::printf("sync_patterns: no CUDA device or driver on this machine (%s); nothing to run.\n",
                probe != cudaSuccess ? cudaGetErrorString(probe) : "0 devices");
    return 0;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("sync_patterns: %d steps on %s (sm_%d%d)\n", steps, prop.name, prop.major, prop.minor);

  const int n = 1 << 20;
  float *w = nullptr, *x = nullptr, *loss = nullptr;
  CHECK(cudaMalloc(&w, n * sizeof(float)));
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&loss, sizeof(float)));
  CHECK(cudaMemset(w, 0, n * sizeof(float)));
  std::vector<float> batch(n, 1.0f);  // pageable host memory
  float host_loss = 0;
  for (int s = 0; s < steps; ++s) {
    float* scratch = nullptr;
    CHECK(cudaMalloc(&scratch, 8 << 20));                      // churn: allocate every step
    CHECK(cudaMemcpyAsync(x, batch.data(), n * sizeof(float),  // pageable source: runs synchronously
                          cudaMemcpyHostToDevice, 0));
    step_kernel<<<(n + 255) / 256, 256>>>(w, x, loss, n);     // legacy default stream
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(&host_loss, loss, sizeof(float), cudaMemcpyDeviceToHost));  // .item()
    CHECK(cudaDeviceSynchronize());                            // explicit sync in the loop
    CHECK(cudaFree(scratch));                                  // frees synchronize the device
  }
  std::printf("sync_patterns: final loss %.6f\n", host_loss);
  CHECK(cudaFree(w));
  CHECK(cudaFree(x));
  CHECK(cudaFree(loss));
  return 0;
}
