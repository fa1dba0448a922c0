// libtorch_loop: the C++ twin of gpu/torch_loop.py (same model, optimizer, phases),
// for the GPU-host proof. It prints ONE JSON line with the CUDA caching allocator's
// statistics for device 0 (c10::cuda::CUDACachingAllocator::getDeviceStats), under
// the same keys torch.cuda.memory_stats() uses, for gpu/check_gpu_report.py.
// Kept to long-standing API (written without the 2.11 headers at hand).
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

float train(torch::nn::Sequential& model, torch::optim::AdamW& opt, int steps, int64_t batch, const torch::Device& dev) {
  torch::Tensor loss;
  for (int i = 0; i < steps; ++i) {
    auto x = torch::randn({batch, 1024}, torch::TensorOptions().device(dev));
    auto y = torch::randint(0, 10, {batch}, torch::TensorOptions().dtype(torch::kLong).device(dev));
    opt.zero_grad();
    loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  }
  return loss.item<float>();
}

std::string mapped_libcudart() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (path.find("/libcudart.so") != std::string::npos) return path;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  if (!torch::cuda::is_available()) {
    std::fprintf(stderr, "torch::cuda::is_available() is false\n");
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  torch::manual_seed(0);
  const torch::Device dev(torch::kCUDA, 0);
  torch::nn::Sequential model(torch::nn::Linear(1024, 2048), torch::nn::GELU(),
                              torch::nn::LayerNorm(torch::nn::LayerNormOptions({2048})),
                              torch::nn::Linear(2048, 2048), torch::nn::GELU(), torch::nn::Linear(2048, 10));
  model->to(dev);
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(1e-3));
  const float loss1 = train(model, opt, steps, 256, dev);
  torch::cuda::synchronize();
  c10::cuda::CUDACachingAllocator::emptyCache();  // returns unused segments: cudaFree
  const float loss2 = train(model, opt, steps, 1024, dev);
  torch::cuda::synchronize();

  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(0);
  const auto& seg = stats.segment[0];  // index 0: StatType::AGGREGATE ("all")
  const auto& res = stats.reserved_bytes[0];
  const auto& alloc = stats.allocated_bytes[0];
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const char* conf = std::getenv("PYTORCH_CUDA_ALLOC_CONF");
  std::printf(
      "{\"program\": \"libtorch_loop\", \"pid\": %d, \"torch\": \"%d.%d.%d\", \"cudart_loaded\": \"%s\", "
      "\"alloc_conf\": \"%s\", \"steps\": %d, \"loss\": [%g, %g], \"seconds\": %.3f, \"memory_stats\": {"
      "\"segment.all.allocated\": %lld, \"segment.all.freed\": %lld, \"segment.all.current\": %lld, "
      "\"segment.all.peak\": %lld, \"reserved_bytes.all.allocated\": %lld, \"reserved_bytes.all.freed\": %lld, "
      "\"reserved_bytes.all.current\": %lld, \"reserved_bytes.all.peak\": %lld, \"allocated_bytes.all.peak\": %lld, "
      "\"num_alloc_retries\": %lld, \"num_ooms\": %lld, \"num_device_alloc\": %lld, \"num_device_free\": %lld}}\n",
      static_cast<int>(getpid()), TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH,
      mapped_libcudart().c_str(), conf ? conf : "", 2 * steps, loss1, loss2, secs,
      static_cast<long long>(seg.allocated), static_cast<long long>(seg.freed), static_cast<long long>(seg.current),
      static_cast<long long>(seg.peak), static_cast<long long>(res.allocated), static_cast<long long>(res.freed),
      static_cast<long long>(res.current), static_cast<long long>(res.peak), static_cast<long long>(alloc.peak),
      static_cast<long long>(stats.num_alloc_retries), static_cast<long long>(stats.num_ooms),
      static_cast<long long>(stats.num_device_alloc), static_cast<long long>(stats.num_device_free));
  std::fflush(stdout);
  return 0;
}
