// Triton's toolchain: its ptxas's release read from the binary's own banner, which SMs a release
// targets, and crafted triton packages whose ptxas, TRITON_* variables or libcuda search fail
// the way users meet it ("Cannot find ptxas", "libcuda.so cannot found", ptxas too old for sm_100).
#include <sys/stat.h>

#include <map>
#include <set>

#include "policy/rules/toolchain.h"
#include "symbols/triton_toolchain.h"
#include "tests/unit/symbols_test_support.h"

using namespace cudashim;
using namespace cudashim::symbols;
using namespace symbols_test;
using cudashim::policy::TritonReport;
using cudashim::policy::triton_findings;

namespace {

// Copies: callers pass temporaries.
std::vector<Finding> with_id(const std::vector<Finding>& fs, const std::string& id) {
  std::vector<Finding> out;
  for (const auto& f : fs)
    if (id == f.info().name) out.push_back(f);
  return out;
}

// A stand-in tool: a shell script whose bytes carry the banner, as the real binary's do.
void fake_tool(const fs::path& p, const std::string& release, const std::string& full) {
  fs::create_directories(p.parent_path());
  write_text(p, "#!/bin/sh\n# ptxas: NVIDIA (R) Ptx optimizing assembler\necho 'Cuda compilation tools, release " + release + ", V" +
                    full + "'\n");
  fs::permissions(p, fs::perms::owner_all);
}

// A site-packages with a triton package whose bundled ptxas is CUDA `release`.
struct FakeTriton {
  TempDir t;
  fs::path sp = t / "site-packages";
  fs::path pkg = sp / "triton";
  explicit FakeTriton(const std::string& release = "12.4", const std::string& full = "12.4.131", bool new_driver_py = true) {
    fake_tool(pkg / "backends/nvidia/bin/ptxas", release, full);
    fake_tool(pkg / "backends/nvidia/bin/cuobjdump", release, full);
    write_text(pkg / "backends/nvidia/driver.py",
               std::string("import os\n\nlibraries = [") + (new_driver_py ? "'libcuda.so.1'" : "'cuda'") + "]\n");
    write_text(pkg / "__init__.py", "__version__ = '3.1.0'\n");
    fs::create_directories(sp / "triton-3.2.0.dist-info");
  }
  TritonInput input(int sm, std::map<std::string, std::string> env = {}) {
    env_ = std::move(env);
    return read_triton_input(pkg.string(), sm,
                             [this](const char* n) -> const char* {
                               auto it = env_.find(n);
                               return it == env_.end() ? nullptr : it->second.c_str();
                             },
                             nullptr, "", {}, true);
  }
  std::map<std::string, std::string> env_;
};

}  // namespace

TEST_CASE("triton: a tool's release from its banner", "[triton]") {
  auto v = parse_tool_version(std::string("junk\0Cuda compilation tools, release %d.%d, writing file\0"
                                          "Cuda compilation tools, release 12.8, V12.8.93\nBuild cuda_12.8",
                                          120));
  REQUIRE(v.has_value());
  CHECK(v->major == 12);
  CHECK(v->minor == 8);
  CHECK(v->full == "12.8.93");
  CHECK_FALSE(parse_tool_version("no banner here").has_value());
  CHECK_FALSE(parse_tool_version("Cuda compilation tools, release ").has_value());
  CHECK_FALSE(parse_tool_version("Cuda compilation tools, release x.y, V1").has_value());
}

TEST_CASE("triton: which CUDA releases target which SM", "[triton]") {
  CHECK(ptxas_target(11, 8, 90).support == SmSupport::yes);
  CHECK(ptxas_target(11, 7, 90).support == SmSupport::too_old);
  CHECK(ptxas_target(11, 8, 90, true).support == SmSupport::too_old);  // sm_90a needs 12.0
  CHECK(ptxas_target(12, 0, 90, true).support == SmSupport::yes);
  CHECK(ptxas_target(12, 6, 100).support == SmSupport::too_old);
  CHECK(ptxas_target(12, 6, 100).first == "12.8");
  CHECK(ptxas_target(12, 8, 100).support == SmSupport::yes);
  CHECK(ptxas_target(12, 8, 120).support == SmSupport::yes);
  CHECK(ptxas_target(12, 8, 103).support == SmSupport::too_old);
  CHECK(ptxas_target(12, 9, 103).support == SmSupport::yes);
  CHECK(ptxas_target(12, 9, 110).support == SmSupport::too_old);
  CHECK(ptxas_target(13, 0, 110).support == SmSupport::yes);
  CHECK(ptxas_target(13, 0, 101).support == SmSupport::dropped);  // renamed sm_110
  CHECK(ptxas_target(13, 0, 70).support == SmSupport::dropped);   // Volta: last in 12.9
  CHECK(ptxas_target(13, 0, 70).last == "12.9");
  CHECK(ptxas_target(13, 0, 75).support == SmSupport::yes);
  CHECK(ptxas_target(13, 0, 130).support == SmSupport::unknown);  // not in the table: no verdict
}

TEST_CASE("triton: crafted packages", "[triton]") {
  SECTION("the bundled ptxas, its release, the package version from the dist-info") {
    FakeTriton tr("12.8", "12.8.93");
    TritonInput in = tr.input(90);
    CHECK(in.version == "3.2.0");
    CHECK(in.links_libcuda_soname == std::optional<bool>(true));
    REQUIRE(in.tools.size() == 3);  // ptxas, cuobjdump, nvdisasm (no ptxas-blackwell in this Triton)
    CHECK(in.tools[0].bundled_version->full == "12.8.93");
    CHECK(in.tools[2].bundled.empty());  // no nvdisasm
    in.cache_libcuda_paths = {(tr.t / "drv/libcuda.so.1").string()};
    fs::create_directories(tr.t / "drv");
    write_text(tr.t / "drv/libcuda.so.1", "x");
    const TritonReport r = triton_findings(in);
    CHECK(r.ptxas_path == (tr.pkg / "backends/nvidia/bin/ptxas").string());
    REQUIRE(r.findings.size() == 1);
    CHECK(std::string(r.findings[0].info().name) == "triton.toolchain");
    CHECK(r.libcuda_how == "ldconfig cache");
  }
  SECTION("a ptxas from CUDA 12.4 on sm_100: the error names the file, the release needed and the variable") {
    FakeTriton tr("12.4", "12.4.131");
    TritonInput in = tr.input(100);
    const TritonReport r = triton_findings(in);
    auto bad = with_id(r.findings, "triton.ptxas-unsupported-sm");
    REQUIRE(bad.size() == 1);
    CHECK(bad[0].info().severity == Severity::error);
    CHECK(bad[0].message.find((tr.pkg / "backends/nvidia/bin/ptxas").string() + " is CUDA 12.4 (V12.4.131): sm_100 needs ptxas "
                               "from CUDA 12.8 or newer; set TRITON_PTXAS_PATH") != std::string::npos);
    SECTION("TRITON_PTXAS_PATH at a 12.8 ptxas fixes it") {
      fake_tool(tr.t / "cuda-12.8/bin/ptxas", "12.8", "12.8.93");
      const TritonInput fixed = tr.input(100, {{"TRITON_PTXAS_PATH", (tr.t / "cuda-12.8/bin/ptxas").string()}});
      const TritonReport ok = triton_findings(fixed);
      CHECK(with_id(ok.findings, "triton.ptxas-unsupported-sm").empty());
      CHECK(ok.ptxas_path == (tr.t / "cuda-12.8/bin/ptxas").string());
    }
    SECTION("Triton with ptxas-blackwell uses it (and its variable) from sm_100 on") {
      fake_tool(tr.pkg / "backends/nvidia/bin/ptxas-blackwell", "12.9", "12.9.86");
      const TritonReport ok = triton_findings(tr.input(100));
      CHECK(with_id(ok.findings, "triton.ptxas-unsupported-sm").empty());
      CHECK(ok.ptxas_path == (tr.pkg / "backends/nvidia/bin/ptxas-blackwell").string());
      const TritonReport thor = triton_findings(tr.input(110));
      auto bad110 = with_id(thor.findings, "triton.ptxas-unsupported-sm");
      REQUIRE(bad110.size() == 1);
      CHECK(bad110[0].message.find("set TRITON_PTXAS_BLACKWELL_PATH") != std::string::npos);
    }
  }
  SECTION("TRITON_PTXAS_PATH at a folder or a missing file: Triton silently takes its bundled ptxas") {
    FakeTriton tr("12.8", "12.8.93");
    for (const std::string& bad : {(tr.t / "cuda/bin").string(), (tr.t / "nope/ptxas").string()}) {
      fs::create_directories(tr.t / "cuda/bin");
      const TritonReport r = triton_findings(tr.input(90, {{"TRITON_PTXAS_PATH", bad}}));
      auto env = with_id(r.findings, "triton.env-path-bad");
      REQUIRE(env.size() == 1);
      CHECK(env[0].subject == "TRITON_PTXAS_PATH");
      CHECK(env[0].message.find("Triton silently uses its bundled " + (tr.pkg / "backends/nvidia/bin/ptxas").string()) !=
            std::string::npos);
      CHECK(r.ptxas_path == (tr.pkg / "backends/nvidia/bin/ptxas").string());
    }
  }
  SECTION("no bundled ptxas and no variable: triton.ptxas-missing") {
    FakeTriton tr;
    fs::remove(tr.pkg / "backends/nvidia/bin/ptxas");
    auto missing = with_id(triton_findings(tr.input(90)).findings, "triton.ptxas-missing");
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].evidence.back() == "TRITON_PTXAS_PATH is not set");
  }
}

TEST_CASE("triton: libcuda the way libcuda_dirs() looks for it", "[triton]") {
  TempDir t;
  fs::create_directories(t / "drv");
  write_text(t / "drv/libcuda.so.1", "x");
  TritonInput in;
  in.package_dir = (t / "triton").string();
  in.sm = 90;
  in.links_libcuda_soname = true;
  in.driver_found = true;
  in.file_exists = [](const std::string& p) {
    struct stat s {};
    return stat(p.c_str(), &s) == 0 && S_ISREG(s.st_mode);
  };
  TritonTool ptxas;
  ptxas.name = "ptxas";
  ptxas.env_var = "TRITON_PTXAS_PATH";
  ptxas.bundled = "/fake/ptxas";
  in.tools = {ptxas};
  SECTION("the loader finds the driver (ld.so's default folders) but ldconfig was never run: Triton fails") {
    auto nf = with_id(triton_findings(in).findings, "triton.libcuda-not-found");
    REQUIRE(nf.size() == 1);
    CHECK(nf[0].info().severity == Severity::error);
    CHECK(nf[0].message.find("libcuda.so cannot found") != std::string::npos);
    CHECK(nf[0].evidence[1] == "ldconfig -p: no libcuda.so.1 line");
    SECTION("without any driver it is not Triton's problem: no finding") {
      in.driver_found = false;
      CHECK(with_id(triton_findings(in).findings, "triton.libcuda-not-found").empty());
    }
  }
  SECTION("LD_LIBRARY_PATH is Triton's fallback when the cache has no line") {
    in.ld_library_path = "/nowhere:" + (t / "drv").string();
    const TritonReport r = triton_findings(in);
    CHECK(with_id(r.findings, "triton.libcuda-not-found").empty());
    CHECK(r.libcuda_how == "LD_LIBRARY_PATH");
    CHECK(r.libcuda_dirs == std::vector<std::string>{(t / "drv").string()});
  }
  SECTION("an older Triton links -lcuda: without an unversioned libcuda.so it cannot link its launcher") {
    in.links_libcuda_soname = false;
    in.cache_libcuda_paths = {(t / "drv/libcuda.so.1").string()};
    auto nf = with_id(triton_findings(in).findings, "triton.libcuda-not-found");
    REQUIRE(nf.size() == 1);
    CHECK(nf[0].message.find("cannot find -lcuda") != std::string::npos);
    write_text(t / "drv/libcuda.so", "x");
    CHECK(with_id(triton_findings(in).findings, "triton.libcuda-not-found").empty());
  }
  SECTION("TRITON_LIBCUDA_PATH naming the file instead of its folder") {
    in.libcuda_path_env = (t / "drv/libcuda.so.1").string();
    auto bad = with_id(triton_findings(in).findings, "triton.env-path-bad");
    REQUIRE(bad.size() == 1);
    CHECK(bad[0].message.find("names the file: Triton wants the folder that holds libcuda.so.1 (here " + (t / "drv").string() + ")") !=
          std::string::npos);
    in.libcuda_path_env = (t / "drv").string();
    CHECK(with_id(triton_findings(in).findings, "triton.env-path-bad").empty());
  }
  SECTION("no /sbin/ldconfig (Nix, distroless) and no TRITON_LIBCUDA_PATH") {
    in.ldconfig_present = false;
    auto nf = with_id(triton_findings(in).findings, "triton.libcuda-not-found");
    REQUIRE(nf.size() == 1);
    CHECK(nf[0].message.find("/sbin/ldconfig is missing") != std::string::npos);
  }
}

TEST_CASE("triton: the package folder from a site-packages or itself", "[triton]") {
  FakeTriton tr;
  CHECK(find_triton_package(tr.sp.string()) == tr.pkg.string());
  CHECK(find_triton_package(tr.pkg.string()) == tr.pkg.string());
  CHECK_FALSE(find_triton_package((tr.t / "elsewhere").string()).has_value());
}
