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
