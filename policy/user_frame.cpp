// user_frame.cpp: the path rules of policy/user_frame.h and the per-code-object cache.
#include "policy/user_frame.h"

#include "policy/host_framework.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace cudashim::policy {
namespace {

char g_program_pkg[64];  // the top-level package the program itself is, when it lives in site-packages

// Code a framework generates and runs from its own cache folders: TorchInductor's output and
// autotuning modules (/tmp/torchinductor_<user>/...) and Triton's cache (~/.triton/cache/...).
// Not the user's, though no site-packages is in their path. {marker, the framework}.
constexpr const char* kGeneratedDirs[][2] = {{"/torchinductor_", "torch"}, {"/.triton/cache/", "triton"}};

const char* generated_by(const char* file) {
  for (const auto& d : kGeneratedDirs)
    if (std::strstr(file, d[0]) != nullptr) return d[1];
  return nullptr;
}

// Compile and autotuning code (docs/findings.md, "Warm-up and compile bursts"): a sync made
// under one of these frames is the compiler's or the autotuner's, paid in the first calls of
// a compiled function or a tuned kernel, not once a step. {a path tail, a function or nullptr: any}.
constexpr const char* kWarmupFrames[][2] = {
    {"torch/_dynamo/convert_frame.py", nullptr},
    {"torch/_dynamo/symbolic_convert.py", nullptr},
    {"torch/_dynamo/output_graph.py", nullptr},
    {"torch/_inductor/compile_fx.py", nullptr},
    {"torch/_inductor/select_algorithm.py", nullptr},
    {"torch/_inductor/autotune_process.py", nullptr},
    {"torch/_inductor/runtime/benchmarking.py", nullptr},
    {"torch/_inductor/runtime/triton_heuristics.py", "autotune_to_one_config"},
    {"torch/_inductor/runtime/triton_heuristics.py", "benchmark_all_configs"},
    {"torch/_inductor/runtime/triton_heuristics.py", "precompile"},
    {"torch/_functorch/aot_autograd.py", nullptr},
    {"torch/_functorch/_aot_autograd/jit_compile_runtime_wrappers.py", nullptr},
    {"triton/runtime/autotuner.py", nullptr},
    {"triton/testing.py", nullptr},
    {"triton/compiler/", nullptr},
    // A convolution's forward never waits for the GPU, unless cuDNN is autotuning it
    // (torch.backends.cudnn.benchmark: timed trials of each algorithm the first time a shape
    // is seen): those syncs, reached from the model's forward, are warm-up bursts at each new
    // shape (H200: gpu/realworld/cudnn_benchmark.py). The backward's autotuning runs on
    // autograd's thread, without a Python frame: torch's own, an info finding.
    {"torch/nn/modules/conv.py", nullptr},
};

const char* after_packages_dir(const char* file) {
  for (const char* dir : {"/site-packages/", "/dist-packages/"}) {
    const char* p = std::strstr(file, dir);
    if (p != nullptr) {
      // The last one: a venv inside another one's site-packages names the inner package.
      for (const char* q = p; (q = std::strstr(q + 1, dir)) != nullptr;) p = q;
      return p + std::strlen(dir);
    }
  }
  return nullptr;
}

// .../lib/python3.12/x.py (or lib64): the standard library of some CPython.
bool in_stdlib(const char* file) {
  for (const char* dir : {"/lib/python3.", "/lib64/python3."}) {
    for (const char* p = std::strstr(file, dir); p != nullptr; p = std::strstr(p + 1, dir)) {
      const char* q = p + std::strlen(dir);
      if (*q < '0' || *q > '9') continue;
      while (*q >= '0' && *q <= '9') ++q;
      if (*q == 't') ++q;  // free-threaded builds: lib/python3.13t
      if (*q == '/') return true;
    }
  }
  return false;
}

// Copies the package's top-level name from `p` (just past "site-packages/"): up to the
// next '/', without a ".py" or a native module's ".cpython-..."/".so" suffix.
void copy_package(const char* p, char* out, size_t n) {
  size_t k = 0;
  for (; p[k] != '\0' && p[k] != '/' && p[k] != '.' && k + 1 < n; ++k) out[k] = p[k];
  out[k] = '\0';
  // JAX installs its CUDA plugin as jax_plugins/ and its native code as jaxlib/: both are JAX.
  if (std::strcmp(out, "jax_plugins") == 0 || std::strcmp(out, "jaxlib") == 0) std::snprintf(out, n, "jax");
}

struct CodeSlot {
  std::atomic<const void*> code{nullptr};
  std::atomic<unsigned char> owner{0};
};
constexpr size_t kCodeSlots = 4096;  // power of two
constinit CodeSlot g_codes[kCodeSlots];

}  // namespace

void configure_user_frames(const char* const* argv, int argc) {
  g_program_pkg[0] = '\0';
  for (int i = 1; i < argc && argv[i] != nullptr; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "-m") == 0 && i + 1 < argc && argv[i + 1] != nullptr) {
      copy_package(argv[i + 1], g_program_pkg, sizeof g_program_pkg);
      return;
    }
    if (std::strcmp(a, "-c") == 0 || std::strcmp(a, "-") == 0) return;  // code on the command line or stdin
    if (std::strcmp(a, "-W") == 0 || std::strcmp(a, "-X") == 0 || std::strcmp(a, "--check-hash-based-pycs") == 0) {
      ++i;  // options that take a value
      continue;
    }
    if (a[0] == '-') continue;
    if (const char* p = after_packages_dir(a)) copy_package(p, g_program_pkg, sizeof g_program_pkg);
    return;
  }
}

FrameOwner frame_owner(const char* file) {
  if (file == nullptr || file[0] == '\0' || std::strcmp(file, "?") == 0) return FrameOwner::unknown;
  if (file[0] == '<') return std::strncmp(file, "<frozen", 7) == 0 ? FrameOwner::stdlib : FrameOwner::user;
  if (generated_by(file) != nullptr) return FrameOwner::framework;
  if (const char* p = after_packages_dir(file)) {
    char pkg[64];
    copy_package(p, pkg, sizeof pkg);
    return g_program_pkg[0] != '\0' && std::strcmp(pkg, g_program_pkg) == 0 ? FrameOwner::user : FrameOwner::framework;
  }
  return in_stdlib(file) ? FrameOwner::stdlib : FrameOwner::user;
}

void framework_of(const char* file, char* out, size_t n) {
  if (n == 0) return;
  out[0] = '\0';
  if (file == nullptr) return;
  if (const char* p = after_packages_dir(file)) copy_package(p, out, n);
  else if (const char* g = generated_by(file)) std::snprintf(out, n, "%s", g);
}

bool is_warmup_frame(const char* file, const char* function) {
  if (file == nullptr) return false;
  for (const auto& w : kWarmupFrames)
    if (std::strstr(file, w[0]) != nullptr && (w[1] == nullptr || (function != nullptr && std::strcmp(function, w[1]) == 0)))
      return true;
  return false;
}

int warmup_frame_in(const recorder::PyFrameText* frames, int n) {
  const int user = user_frame_in(frames, n);
  const int end = user < 0 ? n : user;
  for (int i = 0; i < end; ++i)
    if (is_warmup_frame(frames[i].file, frames[i].function)) return i;
  return -1;
}

std::string framework_of(const char* file) {
  char buf[64];
  framework_of(file, buf, sizeof buf);
  return buf;
}

FrameOwner code_owner(const void* code, FileOf file_of) {
  if (code == nullptr) return FrameOwner::unknown;
  size_t b = (reinterpret_cast<uintptr_t>(code) >> 4) & (kCodeSlots - 1);
  for (int probe = 0; probe < 16; ++probe, b = (b + 1) & (kCodeSlots - 1)) {
    CodeSlot& s = g_codes[b];
    const void* cur = s.code.load(std::memory_order_acquire);
    if (cur == code) {
      const unsigned char o = s.owner.load(std::memory_order_acquire);
      if (o != 0) return static_cast<FrameOwner>(o);
      break;  // being filled by another thread: classify without the cache
    }
    if (cur != nullptr) continue;
    if (!s.code.compare_exchange_strong(cur, code, std::memory_order_acq_rel)) {
      if (cur == code) break;
      continue;
    }
    char file[256];
    file_of(code, file, sizeof file);
    const FrameOwner o = frame_owner(file);
    s.owner.store(static_cast<unsigned char>(o), std::memory_order_release);
    return o;
  }
  char file[256];
  file_of(code, file, sizeof file);
  return frame_owner(file);
}

int user_frame_in(const recorder::PyFrameText* frames, int n) {
  for (int i = 0; i < n; ++i) {
    const FrameOwner o = frame_owner(frames[i].file);
    if (o == FrameOwner::user || o == FrameOwner::unknown) return i;
  }
  return -1;
}

int keep_user_frame(const recorder::PyFrameText* all, int n, recorder::PyFrameText* out, int max) {
  if (max <= 0) return 0;
  const int user = user_frame_in(all, n);
  const int kept = n < max ? n : max;
  for (int i = 0; i < kept; ++i) out[i] = all[i];
  if (user >= max) {
    out[max - 1] = all[user];
    // The outermost host framework between (policy/host_framework.h), else the innermost
    // helper package's frame, stays too, under the user's frame: whose sync it is, and the
    // helper the finding names, must not depend on how deep the array library's frames go.
    int named = host_frame_in(all, user);
    if (named < 0) named = helper_frame_in(all, user);
    if (named >= max - 1 && max >= 2) out[max - 2] = all[named];
  }
  return kept;
}

void user_frames_reset() {
  for (CodeSlot& s : g_codes) {
    s.owner.store(0, std::memory_order_relaxed);
    s.code.store(nullptr, std::memory_order_relaxed);
  }
}

}  // namespace cudashim::policy
