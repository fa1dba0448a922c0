// user_frame_test.cpp: whose code a Python frame is (policy/user_frame.h).
#include "policy/user_frame.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>

using cudashim::policy::FrameOwner;
namespace pol = cudashim::policy;

TEST_CASE("a frame is the user's, the standard library's or a framework's, by its path") {
  const char* plain[] = {"python3", "train.py"};
  pol::configure_user_frames(plain, 2);
  SECTION("installed packages are frameworks, named by their top-level package") {
    CHECK(pol::frame_owner("/venv/lib/python3.12/site-packages/torch/nn/modules/module.py") == FrameOwner::framework);
    CHECK(pol::frame_owner("/usr/lib/python3/dist-packages/transformers/trainer.py") == FrameOwner::framework);
    CHECK(pol::framework_of("/venv/lib/python3.12/site-packages/torch/nn/modules/module.py") == "torch");
    CHECK(pol::framework_of("/venv/lib/python3.12/site-packages/six.py") == "six");
    CHECK(pol::framework_of("/venv/lib/python3.12/site-packages/jax_plugins/xla_cuda12/xla_cuda_plugin.so") == "jax");
    CHECK(pol::framework_of("/home/me/train.py").empty());
  }
  SECTION("the interpreter's own library and frozen modules are the standard library") {
    CHECK(pol::frame_owner("/usr/lib/python3.12/threading.py") == FrameOwner::stdlib);
    CHECK(pol::frame_owner("/root/.pyenv/versions/3.13.0/lib/python3.13/concurrent/futures/thread.py") == FrameOwner::stdlib);
    CHECK(pol::frame_owner("<frozen runpy>") == FrameOwner::stdlib);
  }
  SECTION("everything else is the user's, a folder that only looks like a Python one included") {
    CHECK(pol::frame_owner("/home/me/train.py") == FrameOwner::user);
    CHECK(pol::frame_owner("/home/me/lib/python3-tools/step.py") == FrameOwner::user);
    CHECK(pol::frame_owner("<string>") == FrameOwner::user);
  }
}

TEST_CASE("a program that itself lives in site-packages is the user's code there") {
  const char* as_module[] = {"python3", "-X", "dev", "-m", "mytrainer.cli", "--lr", "1"};
  pol::configure_user_frames(as_module, 7);
  CHECK(pol::frame_owner("/venv/lib/python3.12/site-packages/mytrainer/loop.py") == FrameOwner::user);
  CHECK(pol::frame_owner("/venv/lib/python3.12/site-packages/torch/cuda/__init__.py") == FrameOwner::framework);
  const char* by_path[] = {"python3", "/venv/lib/python3.12/site-packages/mytrainer/run.py"};
  pol::configure_user_frames(by_path, 2);
  CHECK(pol::frame_owner("/venv/lib/python3.12/site-packages/mytrainer/loop.py") == FrameOwner::user);
  const char* plain[] = {"python3", "train.py"};
  pol::configure_user_frames(plain, 2);
  CHECK(pol::frame_owner("/venv/lib/python3.12/site-packages/mytrainer/loop.py") == FrameOwner::framework);
}

TEST_CASE("the user's frame is kept when it lies deeper than a site's stack holds") {
  const char* plain[] = {"python3", "train.py"};
  pol::configure_user_frames(plain, 2);
  cudashim::recorder::PyFrameText all[10], kept[4];
  for (int i = 0; i < 9; ++i) std::snprintf(all[i].file, sizeof all[i].file, "/v/lib/python3.12/site-packages/torch/f%d.py", i);
  std::snprintf(all[9].file, sizeof all[9].file, "/home/me/train.py");
  all[9].line = 42;
  REQUIRE(pol::keep_user_frame(all, 10, kept, 4) == 4);
  CHECK(std::strcmp(kept[0].file, all[0].file) == 0);  // the innermost frames stay
  CHECK(std::strcmp(kept[3].file, "/home/me/train.py") == 0);
  CHECK(kept[3].line == 42);
  CHECK(pol::user_frame_in(kept, 4) == 3);
  CHECK(pol::user_frame_in(all, 9) == -1);  // only torch: no user frame
}

TEST_CASE("a code object is classified once and then read from the cache") {
  pol::user_frames_reset();
  static int reads = 0;
  reads = 0;
  auto file_of = [](const void*, char* buf, size_t n) {
    ++reads;
    std::snprintf(buf, n, "/v/lib/python3.12/site-packages/torch/x.py");
  };
  int code = 0;
  CHECK(pol::code_owner(&code, file_of) == FrameOwner::framework);
  CHECK(pol::code_owner(&code, file_of) == FrameOwner::framework);
  CHECK(reads == 1);
}
