// host_framework_test.cpp: whose sync it is when the user's line reaches it through installed
// code (policy/host_framework.h, catalog/python_packages.def).
#include "policy/host_framework.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>

#include "policy/user_frame.h"

namespace pol = cudashim::policy;
using cudashim::recorder::PyFrameText;

namespace {
// A stack of frames (innermost first) from their files.
template <size_t N>
void stack(PyFrameText (&out)[N], const char* const (&files)[N]) {
  for (size_t i = 0; i < N; ++i) std::snprintf(out[i].file, sizeof out[i].file, "%s", files[i]);
}
constexpr const char* kTorch = "/v/lib/python3.12/site-packages/torch/_tensor.py";
constexpr const char* kCuda = "/v/lib/python3.12/site-packages/torch/cuda/__init__.py";
constexpr const char* kTrainer = "/v/lib/python3.12/site-packages/transformers/trainer.py";
constexpr const char* kAccel = "/v/lib/python3.12/site-packages/accelerate/accelerator.py";
constexpr const char* kUser = "/home/me/train.py";
constexpr const char* kThreading = "/usr/lib/python3.12/threading.py";
}  // namespace

TEST_CASE("a sync reached through an array library is the user's, through a host framework the framework's") {
  const char* plain[] = {"python3", "train.py"};
  pol::configure_user_frames(plain, 2);
  SECTION("torch.cuda.synchronize() and loss.item() at the user's line") {
    PyFrameText f[3];
    stack(f, {kCuda, kTorch, kUser});
    CHECK(pol::host_frame_in(f, pol::user_frame_in(f, 3)) == -1);
    PyFrameText g[1];
    stack(g, {kUser});
    CHECK(pol::host_frame_in(g, pol::user_frame_in(g, 1)) == -1);
  }
  SECTION("trainer.train(): the outermost host framework on the path is named") {
    PyFrameText f[5];
    stack(f, {kTorch, kAccel, kTrainer, kThreading, kUser});
    CHECK(pol::host_frame_in(f, pol::user_frame_in(f, 5)) == 2);
  }
  SECTION("the standard library between is nobody's framework") {
    PyFrameText f[3];
    stack(f, {kTorch, kThreading, kUser});
    CHECK(pol::host_frame_in(f, 2) == -1);
  }
  SECTION("the table: array libraries, host frameworks with their fix, the generic fix for the rest") {
    CHECK(pol::is_array_library("torch"));
    CHECK(pol::is_array_library("jax"));
    CHECK_FALSE(pol::is_array_library("transformers"));
    CHECK_FALSE(pol::is_array_library("six"));
    CHECK(std::strstr(pol::framework_fix("transformers"), "logging_nan_inf_filter") != nullptr);
    CHECK(std::strstr(pol::framework_fix("lightning"), "log_every_n_steps") != nullptr);
    CHECK(std::strstr(pol::framework_fix("six"), "nothing to do in your code") != nullptr);
  }
}

TEST_CASE("a stack deeper than a site keeps still says which host framework it passed through") {
  const char* plain[] = {"python3", "train.py"};
  pol::configure_user_frames(plain, 2);
  PyFrameText all[12], kept[6];
  for (int i = 0; i < 10; ++i) std::snprintf(all[i].file, sizeof all[i].file, "%s", kTorch);
  std::snprintf(all[10].file, sizeof all[10].file, "%s", kTrainer);
  std::snprintf(all[11].file, sizeof all[11].file, "%s", kUser);
  REQUIRE(pol::keep_user_frame(all, 12, kept, 6) == 6);
  CHECK(std::strcmp(kept[5].file, kUser) == 0);
  CHECK(std::strcmp(kept[4].file, kTrainer) == 0);
  CHECK(pol::host_frame_in(kept, pol::user_frame_in(kept, 6)) == 4);
}

TEST_CASE("a sync made by a helper package is the user's, the helper's innermost frame named (issue 33.2)") {
  const char* plain[] = {"python3", "train.py"};
  pol::configure_user_frames(plain, 2);
  constexpr const char* kMetrics = "/v/lib/python3.12/site-packages/metrics/core.py";
  constexpr const char* kMetricsTop = "/v/lib/python3.12/site-packages/metrics/__init__.py";
  SECTION("metrics.compute() -> torch: no host framework, the helper's innermost frame") {
    PyFrameText f[4];
    stack(f, {kTorch, kMetrics, kMetricsTop, kUser});
    const int user = pol::user_frame_in(f, 4);
    CHECK(user == 3);
    CHECK(pol::host_frame_in(f, user) == -1);
    CHECK(pol::helper_frame_in(f, user) == 1);
  }
  SECTION("a host framework on the path wins: the Trainer calling a metrics package is the Trainer's") {
    PyFrameText f[4];
    stack(f, {kMetrics, kTrainer, kTrainer, kUser});
    CHECK(pol::host_frame_in(f, 3) == 2);
  }
  SECTION("array libraries alone: no helper") {
    PyFrameText f[3];
    stack(f, {kCuda, kTorch, kUser});
    CHECK(pol::helper_frame_in(f, 2) == -1);
  }
  SECTION("a deep stack keeps the helper's frame next to the user's") {
    PyFrameText all[10], kept[6];
    for (int i = 0; i < 8; ++i) std::snprintf(all[i].file, sizeof all[i].file, "%s", kTorch);
    std::snprintf(all[8].file, sizeof all[8].file, "%s", kMetrics);
    std::snprintf(all[9].file, sizeof all[9].file, "%s", kUser);
    CHECK(pol::keep_user_frame(all, 10, kept, 6) == 6);
    CHECK(std::strcmp(kept[5].file, kUser) == 0);
    CHECK(std::strcmp(kept[4].file, kMetrics) == 0);
  }
}

TEST_CASE("compile and autotuning frames make a warm-up burst; generated code is the framework's (issue 33.2)") {
  const char* plain[] = {"python3", "train.py"};
  pol::configure_user_frames(plain, 2);
  CHECK(pol::is_warmup_frame("/v/lib/python3.12/site-packages/torch/_inductor/select_algorithm.py", "benchmark"));
  CHECK(pol::is_warmup_frame("/v/lib/python3.12/site-packages/triton/runtime/autotuner.py", "_bench"));
  CHECK(pol::is_warmup_frame("/v/lib/python3.12/site-packages/torch/_inductor/runtime/triton_heuristics.py",
                             "autotune_to_one_config"));
  // cuDNN's autotuning under a convolution's forward (cudnn.benchmark at a new shape).
  CHECK(pol::is_warmup_frame("/v/lib/python3.12/site-packages/torch/nn/modules/conv.py", "_conv_forward"));
  CHECK_FALSE(pol::is_warmup_frame("/v/lib/python3.12/site-packages/torch/nn/modules/linear.py", "forward"));
  // Run at every call of a compiled function: not compile frames.
  CHECK_FALSE(pol::is_warmup_frame("/v/lib/python3.12/site-packages/torch/_inductor/runtime/triton_heuristics.py", "run"));
  CHECK_FALSE(pol::is_warmup_frame("/v/lib/python3.12/site-packages/torch/_dynamo/eval_frame.py", "_fn"));
  CHECK_FALSE(pol::is_warmup_frame(kTorch, "backward"));
  PyFrameText f[4];
  stack(f, {kCuda, "/v/lib/python3.12/site-packages/torch/_inductor/compile_fx.py", kTorch, kUser});
  CHECK(pol::warmup_frame_in(f, 4) == 1);
  // A compile frame outside the user's frame (the user's compiled function called by dynamo) is not the sync's.
  PyFrameText g[3];
  stack(g, {kCuda, kUser, "/v/lib/python3.12/site-packages/torch/_dynamo/convert_frame.py"});
  CHECK(pol::warmup_frame_in(g, 3) == -1);
  CHECK(pol::frame_owner("/tmp/torchinductor_me/ab/cabc123.py") == pol::FrameOwner::framework);
  CHECK(pol::framework_of("/tmp/torchinductor_me/ab/cabc123.py") == "torch");
  CHECK(pol::framework_of("/home/me/.triton/cache/xyz/kernel.py") == "triton");
}
