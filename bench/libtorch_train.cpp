// libtorch_train: a libtorch C++ training loop for the performance table (bench/perf_table.sh): the same
// step with and without the shim, timed step by step. The CPU prepares batches in
// pinned memory, copies them with non_blocking, runs forward, backward and AdamW, and
// reads the loss back every 10th step (one .item(), as a training log does). Each
// step ends with torch::cuda::synchronize() so that its wall time is the GPU's too.
// Prints ONE JSON line: median, p10 and p90 of the measured steps, in milliseconds.
//   libtorch_train [--model mlp|conv] [--steps N] [--warmup N] [--batch N]
// Built by bench/build_libtorch_train.sh against the pip torch (no CMake).
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace {

struct Options {
  std::string model = "mlp";
  int steps = 300;
  int warmup = 30;
  int64_t batch = 0;  // 0: the model's default
};

// Returns false (after one message naming the argument) on anything it does not know.
bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto number = [&](auto& out) {
      char* end = nullptr;
      const long n = v ? std::strtol(v, &end, 10) : 0;
      if (v == nullptr || *end != '\0' || n <= 0) return false;
      out = static_cast<std::remove_reference_t<decltype(out)>>(n);
      ++i;
      return true;
    };
    bool ok = false;
    if (std::strcmp(a, "--model") == 0 && v && (std::strcmp(v, "mlp") == 0 || std::strcmp(v, "conv") == 0)) {
      o.model = v;
      ++i;
      ok = true;
    } else if (std::strcmp(a, "--steps") == 0) ok = number(o.steps);
    else if (std::strcmp(a, "--warmup") == 0) ok = number(o.warmup);
    else if (std::strcmp(a, "--batch") == 0) ok = number(o.batch);
    if (!ok) {
      std::fprintf(stderr, "libtorch_train: bad argument '%s'%s%s; usage: [--model mlp|conv] [--steps N] "
                   "[--warmup N] [--batch N]\n", a, v ? " " : "", v ? v : "");
      return false;
    }
  }
  return true;
}

torch::nn::Sequential make_model(const std::string& name) {
  using namespace torch::nn;
  if (name == "conv")
    return Sequential(Conv2d(Conv2dOptions(3, 64, 3).padding(1)), BatchNorm2d(64), ReLU(),
                      Conv2d(Conv2dOptions(64, 128, 3).stride(2).padding(1)), BatchNorm2d(128), ReLU(),
                      Conv2d(Conv2dOptions(128, 256, 3).stride(2).padding(1)), BatchNorm2d(256), ReLU(),
                      AdaptiveAvgPool2d(AdaptiveAvgPool2dOptions(1)), Flatten(), Linear(256, 100));
  return Sequential(Linear(1024, 4096), GELU(), LayerNorm(LayerNormOptions({4096})), Linear(4096, 4096), GELU(),
                    Linear(4096, 100));
}

double percentile(std::vector<double> v, double q) {  // nearest rank on a sorted copy
  std::sort(v.begin(), v.end());
  const size_t k = static_cast<size_t>(q * (v.size() - 1) + 0.5);
  return v[std::min(k, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  if (!torch::cuda::is_available()) {
    std::fprintf(stderr, "libtorch_train: torch::cuda::is_available() is false (no GPU, or libtorch_cuda not loaded)\n");
    return 1;
  }
  torch::manual_seed(0);
  const torch::Device dev(torch::kCUDA, 0);
  const bool conv = o.model == "conv";
  const int64_t batch = o.batch ? o.batch : (conv ? 128 : 512);
  auto model = make_model(o.model);
  model->to(dev);
  model->train();
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(1e-4));
  // Four CPU batches in pinned memory, reused in turn: the copy is truly asynchronous.
  std::vector<std::pair<torch::Tensor, torch::Tensor>> cpu;
  for (int i = 0; i < 4; ++i) {
    auto x = conv ? torch::randn({batch, 3, 64, 64}) : torch::randn({batch, 1024});
    cpu.emplace_back(x.pin_memory(), torch::randint(0, 100, {batch}, torch::kLong).pin_memory());
  }
  std::vector<double> ms;
  ms.reserve(o.steps);
  float last_loss = 0;
  for (int step = 0; step < o.warmup + o.steps; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto& [xc, yc] = cpu[step % 4];
    auto x = xc.to(dev, /*non_blocking=*/true);
    auto y = yc.to(dev, /*non_blocking=*/true);
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
    if (step % 10 == 0) last_loss = loss.item<float>();
    torch::cuda::synchronize();
    const auto t1 = std::chrono::steady_clock::now();
    if (step >= o.warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  double mean = 0;
  for (double m : ms) mean += m / ms.size();
  std::printf("{\"bench\": \"libtorch_train\", \"model\": \"%s\", \"batch\": %lld, \"torch\": \"%d.%d.%d\", "
              "\"steps\": %zu, \"warmup\": %d, \"median_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, "
              "\"mean_ms\": %.4f, \"loss\": %g}\n",
              o.model.c_str(), static_cast<long long>(batch), TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR,
              TORCH_VERSION_PATCH, ms.size(), o.warmup, percentile(ms, 0.5), percentile(ms, 0.1),
              percentile(ms, 0.9), mean, last_loss);
  std::fflush(stdout);
  return 0;
}
