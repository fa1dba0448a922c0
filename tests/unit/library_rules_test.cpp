// The live library rules (policy/rules/libraries.cpp): driver vs. runtime numbers,
// the environment traps and the module findings, each triggering and not.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "policy/rules/libraries.h"

using cudashim::policy::live_library_rules;
using cudashim::policy::RuleInputs;
using cudashim::symbols::LoadedLibrary;

namespace {

std::vector<std::string> ids(const RuleInputs& in) {
  std::vector<std::string> out;
  for (const auto& f : live_library_rules(in)) out.push_back(f.info().name);
  return out;
}

LoadedLibrary cudart(const std::string& version, const std::string& linkage = "shared") {
  LoadedLibrary l;
  l.path = l.real = linkage == "static" ? "/opt/app/libfoo.so" : "/opt/cuda/libcudart.so." + version;
  l.family = "cudart";
  l.version = version;
  l.version_source = "cudaRuntimeGetVersion";
  l.linkage = linkage;
  return l;
}

bool has(const std::vector<std::string>& v, const std::string& id) {
  for (const auto& x : v)
    if (x == id) return true;
  return false;
}

}  // namespace

TEST_CASE("driver older than a runtime: across majors an error, within one minor compatibility", "[library_rules]") {
  std::vector<LoadedLibrary> libs{cudart("13.0"), cudart("12.9", "static")};
  RuleInputs in;
  in.libraries = &libs;
  in.driver_version = 12080;  // CUDA 12.8
  const auto f = live_library_rules(in);
  REQUIRE(f.size() == 2);
  CHECK(std::string(f[0].info().name) == "driver.too-old");
  CHECK(f[0].message.find("CUDA 13.0") != std::string::npos);
  CHECK(f[0].message.find("12.8") != std::string::npos);
  CHECK(std::string(f[1].info().name) == "driver.minor-compat");
  CHECK(f[1].message.find("linked into /opt/app/libfoo.so") != std::string::npos);

  in.driver_version = 13000;  // 13.0 covers both
  CHECK(ids(in).empty());
  in.driver_version = 0;  // unknown: no verdict
  CHECK(ids(in).empty());
}

TEST_CASE("environment traps", "[library_rules]") {
  RuleInputs in;
  in.module_loading = "EAGER";
  CHECK(has(ids(in), "env.module-loading-eager"));
  in.module_loading = "LAZY";
  CHECK_FALSE(has(ids(in), "env.module-loading-eager"));

  in.cache_disable = "1";
  CHECK(has(ids(in), "env.jit-cache-disabled"));
  in.cache_disable = "0";
  CHECK_FALSE(has(ids(in), "env.jit-cache-disabled"));

  // The cache matters only to a process that JIT-compiled something. A file where the
  // cache folder's parent should be cannot hold it (and root can write anywhere else).
  char file[] = "/tmp/cudashim-cachefile-XXXXXX";
  const int fd = mkstemp(file);
  REQUIRE(fd >= 0);
  close(fd);
  const std::string under_file = std::string(file) + "/ComputeCache";
  in.cache_path = under_file.c_str();
  in.cache_maxsize = "1000";
  CHECK_FALSE(has(ids(in), "env.jit-cache-unwritable"));
  CHECK_FALSE(has(ids(in), "env.jit-cache-too-small"));
  in.modules.ptx_jit_bytes = 5000;
  CHECK(has(ids(in), "env.jit-cache-unwritable"));
  CHECK(has(ids(in), "env.jit-cache-too-small"));
  in.cache_path = "/tmp";
  in.cache_maxsize = "100000";
  CHECK_FALSE(has(ids(in), "env.jit-cache-unwritable"));
  CHECK_FALSE(has(ids(in), "env.jit-cache-too-small"));
  in.cache_maxsize = nullptr;  // the default (1 GiB) holds 5000 bytes
  CHECK_FALSE(has(ids(in), "env.jit-cache-too-small"));
  unlink(file);
}

TEST_CASE("module loads: PTX JIT, no kernel image, slow loading", "[library_rules]") {
  std::vector<cudashim::recorder::ModuleLoad> loads(3);
  loads[0].caller = "/x/libjit.so", loads[0].coverage = "ptx_jit", loads[0].ptx_jit_bytes = 2048, loads[0].sm = 90;
  loads[1].caller = "/x/libold.so", loads[1].coverage = "none", loads[1].sm = 90, loads[1].result = 209;
  loads[2].caller = "/x/libok.so", loads[2].coverage = "sass", loads[2].sm = 90;
  RuleInputs in;
  in.loads = &loads;
  in.modules.count = 3;
  auto f = live_library_rules(in);
  REQUIRE(f.size() == 2);
  CHECK(std::string(f[0].info().name) == "module.ptx-jit");
  CHECK(f[0].subject == "/x/libjit.so");
  CHECK(f[0].message.find("2048 bytes") != std::string::npos);
  CHECK(std::string(f[1].info().name) == "module.no-kernel-image");
  CHECK(f[1].subject == "/x/libold.so");
  // The user's own code: the rows' severities and generic fixes.
  CHECK(f[0].severity() == cudashim::Severity::warning);
  CHECK(f[1].severity() == cudashim::Severity::error);
  CHECK(std::string(f[0].fix()) == f[0].info().fix);

  in.modules.ns = 3'000'000'000;  // 3 s of module loading
  loads[2].dt_ns = 2'900'000'000;
  f = live_library_rules(in);
  REQUIRE(f.size() == 3);
  CHECK(std::string(f[2].info().name) == "module.load-slow");
  CHECK(f[2].evidence.at(0).find("/x/libok.so") != std::string::npos);
}

TEST_CASE("device code loaded at run time that is mostly for other GPUs", "[library_rules]") {
  std::vector<cudashim::recorder::ModuleLoad> loads(2);
  loads[0].caller = "/x/libcudart.so.13", loads[0].sass_bytes = 300ull << 20, loads[0].sass_bytes_for_sm = 60ull << 20;
  loads[1].caller = "/x/libcublasLt.so.13", loads[1].sass_bytes = 30ull << 20, loads[1].sass_bytes_for_sm = 30ull << 20;
  RuleInputs in;
  in.loads = &loads;
  in.modules.count = 2, in.modules.sass_bytes = 330ull << 20, in.modules.sass_bytes_for_sm = 90ull << 20;
  auto f = live_library_rules(in);
  REQUIRE(f.size() == 1);
  CHECK(std::string(f[0].info().name) == "fatbin.mostly-other-archs");
  CHECK(f[0].message.find("330.0 MiB") != std::string::npos);
  CHECK(f[0].evidence.at(0).find("240.0 MiB for other GPUs: /x/libcudart.so.13") != std::string::npos);
  in.modules.sass_bytes_for_sm = 200ull << 20;  // most of it serves this GPU
  CHECK(live_library_rules(in).empty());
  in.modules.sass_bytes = 40ull << 20, in.modules.sass_bytes_for_sm = 1ull << 20;  // too little to matter
  CHECK(live_library_rules(in).empty());
}

TEST_CASE("module and fatbin findings name the library that owns the image, not the runtime that passed it on",
          "[library_rules]") {
  // torch's kernels reach the driver through libcudart's registration: the caller is libcudart,
  // the image lies in libtorch_cuda.so's memory (shim/library_watch.cpp: dladdr on the image).
  std::vector<cudashim::recorder::ModuleLoad> loads(2);
  loads[0].caller = "/x/libcudart.so.13", loads[0].owner = "/x/libtorch_cuda.so";
  loads[0].sass_bytes = 300ull << 20, loads[0].sass_bytes_for_sm = 60ull << 20;
  loads[1].caller = "/x/libcudart.so.13", loads[1].coverage = "ptx_jit", loads[1].ptx_jit_bytes = 4096, loads[1].sm = 90;
  loads[1].owner = "/x/libmyext.so";
  RuleInputs in;
  in.loads = &loads;
  in.modules.count = 2, in.modules.sass_bytes = 300ull << 20, in.modules.sass_bytes_for_sm = 60ull << 20;
  auto f = live_library_rules(in);
  REQUIRE(f.size() == 2);
  CHECK(std::string(f[0].info().name) == "module.ptx-jit");
  CHECK(f[0].subject == "/x/libmyext.so");
  CHECK(std::string(f[1].info().name) == "fatbin.mostly-other-archs");
  CHECK(f[1].evidence.at(0).find("for other GPUs: /x/libtorch_cuda.so") != std::string::npos);
  CHECK(f[1].evidence.at(0).find("libcudart") == std::string::npos);
}

TEST_CASE("device code inside NVIDIA's or a framework's own library is info, with what the user can do", "[library_rules]") {
  // As on the H200 (2026-12-02): cuDNN's libcudnn_graph JITs 832 bytes of PTX; NCCL loads one
  // module with no sm_90 image beside others that run there.
  const std::string site = "/venv/lib/python3.12/site-packages/nvidia/";
  std::vector<cudashim::recorder::ModuleLoad> loads(4);
  loads[0].caller = site + "cudnn/lib/libcudnn_graph.so.9", loads[0].coverage = "ptx_jit", loads[0].ptx_jit_bytes = 832;
  loads[1].caller = site + "nccl/lib/libnccl.so.2", loads[1].coverage = "none", loads[1].result = 209;
  loads[2].caller = site + "nccl/lib/libnccl.so.2", loads[2].coverage = "sass";
  loads[3].caller = "/venv/lib/python3.12/site-packages/mylib/libnone.so", loads[3].coverage = "none", loads[3].result = 209;
  for (auto& l : loads) l.sm = 90;
  RuleInputs in;
  in.loads = &loads;
  in.modules.count = 4;
  auto f = live_library_rules(in);
  REQUIRE(f.size() == 3);
  CHECK(std::string(f[0].info().name) == "module.ptx-jit");
  CHECK(f[0].vendor_internal);
  CHECK(f[0].severity() == cudashim::Severity::info);
  CHECK(std::string(f[0].fix()).find("Nothing to do: the PTX is libcudnn_graph.so.9's own (package nvidia)") == 0);
  // A package none of whose device code runs here: its kernels cannot run, an error still.
  CHECK(std::string(f[1].info().name) == "module.no-kernel-image");
  CHECK(f[1].subject == "/venv/lib/python3.12/site-packages/mylib/libnone.so");
  CHECK_FALSE(f[1].vendor_internal);
  CHECK(f[1].severity() == cudashim::Severity::error);
  // No image here, but other code of NCCL runs on this GPU: a module NCCL does not use here.
  CHECK(std::string(f[2].info().name) == "module.no-kernel-image");
  CHECK(f[2].subject == site + "nccl/lib/libnccl.so.2");
  CHECK(f[2].severity() == cudashim::Severity::info);
  CHECK(std::string(f[2].fix()).find("install a build of package nvidia made for sm_90") != std::string::npos);
  CHECK(f[2].evidence.back() == "other device code of libnccl.so.2 loaded for sm_90");
}
