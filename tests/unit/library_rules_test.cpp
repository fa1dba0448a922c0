// The live library rules (policy/rules/libraries.cpp): driver vs. runtime numbers,
// the environment traps and the module findings, each triggering and not; and the rules on
// the loaded set that the doctor shares (two majors, copies, cuDNN parts, the stub libcuda).
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

namespace {

LoadedLibrary loaded(const std::string& path, const std::string& family, int major, const std::string& version) {
  LoadedLibrary l;
  l.path = l.real = path;
  l.family = family;
  l.major = major;
  l.version = version;
  l.version_source = "file name";
  return l;
}

std::vector<std::string> loaded_ids(const std::vector<LoadedLibrary>& libs) {
  std::vector<std::string> out;
  for (const auto& f : cudashim::policy::loaded_library_findings(libs)) out.push_back(f.info().name + std::string(" ") + f.subject);
  return out;
}

}  // namespace

// The live inventory and the doctor judge a set of files with the same rules
// (policy::library_copy_findings): copies are counted per library and major, majors per family.
TEST_CASE("the loaded set: two majors, two copies of one library, the stub libcuda", "[library_rules]") {
  const auto cudart12a = loaded("/venv/nvidia/cuda_runtime/lib/libcudart.so.12", "cudart", 12, "12.9");
  const auto cudart12b = loaded("/usr/local/cuda-12.4/lib64/libcudart.so.12", "cudart", 12, "12.4");
  const auto cudart13 = loaded("/usr/local/cuda-13.0/lib64/libcudart.so.13", "cudart", 13, "13.0");
  // Two majors and, within major 12, two files: both are true, so both are said.
  CHECK(loaded_ids({cudart12a, cudart12b, cudart13}) ==
        std::vector<std::string>{"library.mixed-majors-in-process cudart", "library.duplicate cudart.so.12"});
  // One file under two names is one copy; a private static runtime is no clash.
  auto alias = cudart12a;
  alias.path = "/venv/nvidia/cuda_runtime/lib/libcudart.so";
  auto linked = cudart13;
  linked.linkage = "static";
  CHECK(loaded_ids({cudart12a, alias, linked}).empty());
  // cuDNN's parts are different libraries of one family, not copies of one another.
  const auto cudnn = loaded("/venv/nvidia/cudnn/lib/libcudnn.so.9", "cudnn", 9, "9");
  const auto ops = loaded("/venv/nvidia/cudnn/lib/libcudnn_ops.so.9", "cudnn", 9, "9");
  CHECK(loaded_ids({cudnn, ops}).empty());
  const auto stub = loaded("/usr/local/cuda/lib64/stubs/libcuda.so.1", "cuda", 1, "");
  CHECK(loaded_ids({stub}) == std::vector<std::string>{"driver.stub-libcuda /usr/local/cuda/lib64/stubs/libcuda.so.1"});
}

TEST_CASE("the loaded set: cuDNN parts from another folder or of another version", "[library_rules]") {
  const auto cudnn = loaded("/opt/cudnn/lib/libcudnn.so.9.1.0", "cudnn", 9, "9.1.0");
  const auto ops_here = loaded("/opt/cudnn/lib/libcudnn_ops.so.9.1.0", "cudnn", 9, "9.1.0");
  const auto ops_elsewhere = loaded("/usr/lib/libcudnn_ops.so.9.1.0", "cudnn", 9, "9.1.0");
  const auto ops_older = loaded("/opt/cudnn/lib/libcudnn_ops.so.9.0.0", "cudnn", 9, "9.0.0");
  CHECK(loaded_ids({cudnn, ops_here}).empty());
  CHECK(loaded_ids({cudnn, ops_elsewhere}) == std::vector<std::string>{"library.cudnn-split-folders cudnn"});
  CHECK(loaded_ids({cudnn, ops_older}) == std::vector<std::string>{"library.cudnn-split-folders cudnn"});
  // A major alone ("9") says nothing of the release: no version split.
  auto ops_major_only = ops_older;
  ops_major_only.version = "9";
  CHECK(loaded_ids({cudnn, ops_major_only}).empty());
}
