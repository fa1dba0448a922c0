// `cudashim doctor` on an ML environment (issue 21): the headline (framework, CUDA, driver
// needed and present), every library the loader cannot find with the requirement that brings it
// back, findings inside vendor files kept out of the exit code, identical copies as one row,
// versions of the CUDA inside, architectures in numeric order.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/unit/doctor_test_support.h"
#include "tests/unit/symbols_fatbin_image.h"
#include "tests/unit/symbols_test_support.h"
#include "tools/doctor.h"

using namespace cudashim;
using namespace cudashim::symbols;
using namespace cudashim::tools;
using namespace symbols_test;
using namespace doctor_test;

namespace {

const char* kTorchMetadata =
    "Metadata-Version: 2.1\nName: torch\nVersion: 2.10.0\n"
    "Requires-Dist: filelock\n"
    "Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90; platform_system == \"Linux\"\n"
    "Requires-Dist: nvidia-nvshmem-cu12==3.3.20; platform_system == \"Linux\"\n"
    "Requires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"\n"
    "\nThe long description: Requires-Dist: not-a-header==1\n";

// A kernel module's version file for `release`.
std::string module_text(const std::string& release) {
  return "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + release + "  Release Build  (dvs-builder@U16-I3-B03-4-3)\n";
}

// A venv's site-packages with torch (dist-info and version.py built for `cuda`) and a
// libtorch_cuda.so that needs libnvshmem_host.so.3 through its RUNPATH (built against a copy
// that is then removed: the wheel was never installed).
struct FakeTorch {
  TempDir t;
  fs::path sp = t / "venv/lib/python3.12/site-packages";
  fs::path torch_cuda;
  explicit FakeTorch(const std::string& cuda = "12.8", bool nvshmem = false) {
    fs::create_directories(sp / "torch-2.10.0.dist-info");
    write_text(sp / "torch-2.10.0.dist-info/METADATA", kTorchMetadata);
    write_text(sp / "torch-2.10.0.dist-info/RECORD", "torch/version.py,,\n");
    fs::create_directories(sp / "torch/lib");
    write_text(sp / "torch/version.py", "__version__ = '2.10.0+cu128'\ndebug = False\ncuda: Optional[str] = '" + cuda +
                                            "'\ngit_version = 'abc'\nhip: Optional[str] = None\n");
    const fs::path nv = sp / "nvidia/nvshmem/lib";
    fake_lib(nv, "libnvshmem_host.so.3", "int nvshmem_init(void) { return 0; }\n");
    torch_cuda = fake_lib(sp / "torch/lib", "libtorch_cuda.so", "int nvshmem_init(void);\nint t(void) { return nvshmem_init(); }\n", "",
                          "-L" + q(nv) + " -l:libnvshmem_host.so.3 -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/../../nvidia/nvshmem/lib'");
    if (!nvshmem) fs::remove_all(sp / "nvidia");
  }
};

HostFacts driver_host(const std::string& release) {
  HostFacts host;
  host.kernel_version_text = module_text(release);
  host.kernel_version_source = "driver.txt";
  return host;
}

}  // namespace

TEST_CASE("doctor: a library the loader cannot find, CUDA-family or not, with the pip requirement", "[doctor][env]") {
  FakeTorch torch;
  const DoctorReport r = diagnose({torch.sp.string()}, 90, "--sm", bare(), {}, driver_host("580.95.05"));
  auto missing = with_id(r, "library.not-found");
  REQUIRE(missing.size() == 1);
  const std::string text = all_evidence(*missing[0]);
  INFO(text);
  CHECK(missing[0]->message == "libtorch_cuda.so: libnvshmem_host.so.3: cannot open shared object file");
  CHECK(text.find("needed by " + torch.torch_cuda.string()) != std::string::npos);
  CHECK(text.find("tried " + (torch.sp / "torch/lib/../../nvidia/nvshmem/lib/libnvshmem_host.so.3").string() + " [runpath]: no such file") !=
        std::string::npos);
  CHECK(std::string(missing[0]->fix()).rfind("pip install \"nvidia-nvshmem-cu12==3.3.20\"", 0) == 0);
  CHECK(r.exit_code() == 4);
  SECTION("the C library's own files are not searched for") {
    CHECK(text.find("libc.so.6") == std::string::npos);
  }
  SECTION("installed, nothing is missing") {
    FakeTorch ok("12.8", /*nvshmem=*/true);
    const DoctorReport clean = diagnose({ok.sp.string()}, 90, "--sm", bare(), {}, driver_host("580.95.05"));
    CHECK(with_id(clean, "library.not-found").empty());
    CHECK(clean.exit_code() == 0);
  }
}

TEST_CASE("doctor: the headline names the framework, its CUDA, the driver it needs and the one present", "[doctor][env]") {
  SECTION("torch for CUDA 12.8 on a 535 driver: OK under minor-version compatibility") {
    FakeTorch torch("12.8", true);
    const DoctorReport r = diagnose({torch.sp.string()}, 90, "--sm", bare(), {}, driver_host("535.104.05"));
    const Headline& h = r.headline;
    CHECK(h.subject == "torch 2.10.0");
    CHECK(h.cuda == "12.8");
    CHECK(h.cuda_source == "torch/version.py");
    CHECK(h.driver_needed == "525.60.13");
    CHECK(h.driver_full == "570.26");
    CHECK(h.driver == "535.104.05");
    CHECK(h.verdict == DriverVerdict::minor_compat);
    CHECK(with_id(r, "doctor.driver-minor-compat").size() == 1);
    CHECK(r.exit_code() == 0);
    const std::string text = render_doctor_text(r, false);
    CHECK(text.rfind("torch 2.10.0, built for CUDA 12.8 (torch/version.py)\n"
                     "  needs driver >= 525.60.13 (>= 570.26 for every CUDA 12.8 feature)\n"
                     "  driver: 535.104.05 (driver.txt): OK under minor-version compatibility\n",
                     0) == 0);
    auto j = nlohmann::json::parse(render_doctor_json(r));
    CHECK(j["headline"]["verdict"] == "minor-compat");
    CHECK(j["headline"]["frameworks"][0]["version"] == "2.10.0");
  }
  SECTION("torch for CUDA 13.0 on a 535 driver: too old, an error") {
    FakeTorch torch("13.0", true);
    const DoctorReport r = diagnose({torch.sp.string()}, 90, "--sm", bare(), {}, driver_host("535.104.05"));
    CHECK(r.headline.verdict == DriverVerdict::too_old);
    CHECK(r.headline.driver_needed == "580");
    auto old = with_id(r, "doctor.driver-too-old");
    REQUIRE(old.size() == 1);
    CHECK(old[0]->message == "torch 2.10.0 is built for CUDA 13.0: it needs driver >= 580; driver 535.104.05 is older");
    CHECK(r.exit_code() == 4);
  }
  SECTION("--driver-version wins over the version file") {
    FakeTorch torch("13.0", true);
    HostFacts host = driver_host("535.104.05");
    host.driver_version = "580.95.05";
    const DoctorReport r = diagnose({torch.sp.string()}, 90, "--sm", bare(), {}, host);
    CHECK(r.headline.verdict == DriverVerdict::ok);
    CHECK(r.headline.driver_source == "--driver-version");
  }
  SECTION("no framework: a CUDA 13 runtime on a 535 driver is too old") {
    TempDir t;
    fake_lib(t / "lib", "libcudart.so.13", "int cudaMalloc(void) { return 0; }\n");
    fs::rename(t / "lib/libcudart.so.13", t / "lib/libcudart.so.13.0.96");
    const DoctorReport r = diagnose({(t / "lib").string()}, 90, "--sm", bare(), {}, driver_host("535.104.05"));
    CHECK(r.headline.cuda == "13.0");
    CHECK(r.headline.verdict == DriverVerdict::too_old);
    CHECK(with_id(r, "doctor.driver-too-old").size() == 1);
  }
  SECTION("no driver: said so, no finding") {
    FakeTorch torch("12.8", true);
    const DoctorReport r = diagnose({torch.sp.string()}, 90, "--sm", bare());
    CHECK(r.headline.verdict == DriverVerdict::no_driver);
    CHECK(render_doctor_text(r, false).find("  driver: none found") != std::string::npos);
  }
}

TEST_CASE("doctor: what NVIDIA's own files carry for other GPUs is a hidden note, not a warning", "[doctor][env]") {
  TempDir t;
  std::vector<std::uint8_t> image;
  append_container(image, {{2, 80}, {1, 80, 0x11, 1000, 64, 0, 8, 0}});  // SASS sm_80 + PTX compute_80: JIT on sm_90
  const std::string source = "__attribute__((section(\".nv_fatbin\"), used, aligned(8))) const unsigned char fb[] = {" +
                             c_bytes(image) + "};\nint k(void) { return 0; }\n";
  const fs::path vendor = fake_lib(t / "venv/lib/python3.12/site-packages/nvidia/cublas/lib", "libcublasLt.so.12", source);
  const fs::path own = fake_lib(t / "myext", "libmyext.so", source);
  const DoctorReport r = diagnose({vendor.string(), own.string()}, 90, "--sm", bare());
  auto jit = with_id(r, "fatbin.no-sass");
  REQUIRE(jit.size() == 2);
  for (const auto* f : jit) CHECK(f->vendor_internal == (f->subject == vendor.string()));
  CHECK(r.exit_code() == 1);  // the user's own extension still warns
  const DoctorReport only_vendor = diagnose({vendor.string()}, 90, "--sm", bare());
  CHECK(only_vendor.exit_code() == 0);
  const std::string quiet = render_doctor_text(only_vendor, false);
  CHECK(quiet.find("[fatbin.no-sass]") == std::string::npos);
  CHECK(quiet.find("(1 more notes inside NVIDIA's and the frameworks' own files") != std::string::npos);
  CHECK(render_doctor_text(only_vendor, false, /*verbose=*/true).find("[fatbin.no-sass]") != std::string::npos);
  auto j = nlohmann::json::parse(render_doctor_json(only_vendor));
  CHECK(j["summary"]["vendor_internal"] == 1);
}

TEST_CASE("doctor: byte-identical copies are one library; versions are the CUDA inside", "[doctor][env]") {
  TempDir t;
  const fs::path sp = t / "site-packages";
  const fs::path lib = sp / "triton/backends/nvidia/lib/cupti";
  const fs::path first = fake_lib(lib, "libcupti.so.12", "int cuptiGetVersion(void) { return 0; }\n");
  fs::copy_file(first, lib / "libcupti.so");              // wheels hold no symlinks: equal files
  fs::copy_file(first, lib / "libcupti.so.2025.1.1");
  fs::create_directories(sp / "triton-3.5.0.dist-info");
  write_text(sp / "triton-3.5.0.dist-info/RECORD",
             "triton/backends/nvidia/lib/cupti/libcupti.so.12,,\ntriton/backends/nvidia/lib/cupti/libcupti.so,,\n");
  const DoctorReport r = diagnose({sp.string()}, 90, "--sm", bare());
  REQUIRE(r.libraries.size() == 1);
  CHECK(r.libraries[0].path == (lib / "libcupti.so.12").string());
  CHECK(r.libraries[0].identical_copies.size() == 2);
  CHECK(with_id(r, "library.duplicate").empty());
  CHECK(r.libraries[0].version.version == "12");  // not Triton's 3.5.0
  CHECK(r.libraries[0].version.source == "soname (major only)");
  SECTION("a copy that differs is still a copy") {
    fake_lib(t / "system", "libcupti.so.12", "int cuptiGetVersion(void) { return 1; }\nint other(void) { return 2; }\n");
    const DoctorReport two = diagnose({sp.string(), (t / "system").string()}, 90, "--sm", bare());
    auto dup = with_id(two, "library.duplicate");
    REQUIRE(dup.size() == 1);
    CHECK(dup[0]->evidence.size() == 2);
    CHECK(all_evidence(*dup[0]).find("identical: ") != std::string::npos);
    CHECK_FALSE(dup[0]->vendor_internal);  // one of them is outside the wheels
  }
}

TEST_CASE("doctor: a framework's bundled copy of another major is not the user's to fix", "[doctor][env]") {
  // The GPU host's torch 2.11 venv (2026-12-01): NVIDIA's cupti 13 wheel beside Triton's bundled
  // cupti 12 made doctor exit 1 on a healthy install.
  TempDir t;
  const fs::path sp = t / "site-packages";
  fake_lib(sp / "nvidia/cu13/lib", "libcupti.so.13", "int cuptiGetVersion(void) { return 13; }\n");
  fake_lib(sp / "triton/backends/nvidia/lib/cupti", "libcupti.so.12", "int cuptiGetVersion(void) { return 12; }\n");
  const DoctorReport r = diagnose({sp.string()}, 90, "--sm", bare());
  auto mixed = with_id(r, "library.mixed-majors");
  REQUIRE(mixed.size() == 1);
  CHECK(mixed[0]->vendor_internal);
  CHECK(mixed[0]->severity() == Severity::info);  // out of the exit code (this fake Triton's missing ptxas is not)
  SECTION("two of NVIDIA's wheels of different majors are still a warning") {
    fake_lib(sp / "nvidia/cuda_cupti/lib", "libcupti.so.12", "int cuptiGetVersion(void) { return 120; }\n");
    const DoctorReport two = diagnose({sp.string()}, 90, "--sm", bare());
    auto m = with_id(two, "library.mixed-majors");
    REQUIRE(m.size() == 1);
    CHECK_FALSE(m[0]->vendor_internal);
    CHECK(m[0]->severity() == Severity::warning);
  }
}

TEST_CASE("doctor: architectures in numeric order", "[doctor][env]") {
  CHECK(arch_less("sm_50", "sm_90"));
  CHECK(arch_less("sm_90", "sm_100"));
  CHECK(arch_less("sm_100", "sm_120"));
  CHECK(arch_less("sm_90", "sm_90a"));
  CHECK_FALSE(arch_less("sm_120", "sm_50"));
  TempDir t;
  std::vector<std::uint8_t> image;
  append_container(image, {{2, 120}, {2, 50}, {2, 100}, {2, 90}});
  const fs::path k = fake_lib(t / "k", "libk.so",
                              "__attribute__((section(\".nv_fatbin\"), used, aligned(8))) const unsigned char fb[] = {" +
                                  c_bytes(image) + "};\nint k(void) { return 0; }\n");
  const DoctorReport r = diagnose({k.string()}, 90, "--sm", bare());
  REQUIRE(r.libraries.size() == 1);
  CHECK(r.libraries[0].fatbin_arch_counts == std::vector<std::string>{"sm_50 1", "sm_90 1", "sm_100 1", "sm_120 1"});
  CHECK(r.libraries[0].coverage->sass_archs == std::vector<std::string>{"sm_50", "sm_90", "sm_100", "sm_120"});
}

TEST_CASE("doctor: JAX and CuPy are found by their dist-info", "[doctor][env]") {
  TempDir t;
  const fs::path sp = t / "site-packages";
  for (const char* d : {"jax-0.4.30.dist-info", "jax_cuda12_plugin-0.4.30.dist-info", "cupy_cuda12x-13.4.0.dist-info"}) {
    fs::create_directories(sp / d);
    write_text(sp / d / "METADATA", std::string("Metadata-Version: 2.1\nName: x\nVersion: ") +
                                        (std::string(d).rfind("cupy", 0) == 0 ? "13.4.0" : "0.4.30") + "\n");
  }
  const auto found = find_frameworks({sp.string()});
  REQUIRE(found.size() == 2);
  CHECK(found[0].name == "jax");
  CHECK(found[0].version == "0.4.30");
  CHECK(found[0].cuda == "12");
  CHECK(found[0].cuda_source == "dist-info name (jax-cuda12-plugin)");
  CHECK(found[1].name == "cupy");
  CHECK(found[1].version == "13.4.0");
  CHECK(found[1].cuda == "12");
  const Headline h = make_headline(found, {}, "535.104.05", "--driver-version");
  CHECK(h.subject == "jax 0.4.30");
  CHECK(h.driver_needed == "525.60.13");
  CHECK(h.driver_full.empty());  // a major only: no release to name
  CHECK(h.verdict == DriverVerdict::ok);
  CHECK(headline_text(h).find("  also: cupy 13.4.0 (CUDA 12)\n") != std::string::npos);
}

TEST_CASE("doctor: framework metadata", "[doctor][env]") {
  CHECK(torch_version_py_cuda("__version__ = '2.10.0'\ncuda: Optional[str] = '12.8'\n") == "12.8");
  CHECK(torch_version_py_cuda("cuda = None\n") == "");
  CHECK(torch_version_py_cuda("cuda_home = '/x'\ncuda = \"13.0\"\n") == "13.0");
  FrameworkInfo f;
  f.requires_dist = {"nvidia-nvshmem-cu12==3.3.20; platform_system == \"Linux\"", "nvidia_cudnn_cu12 == 9.10.2.21",
                     "nvidia-cuda-cupti==13.0.85; extra == \"profiling\""};
  CHECK(pinned_requirement(f, "libnvshmem_host.so.3") == std::optional<std::string>("nvidia-nvshmem-cu12==3.3.20"));
  CHECK(pinned_requirement(f, "libcudnn_graph.so.9") == std::optional<std::string>("nvidia_cudnn_cu12==9.10.2.21"));
  CHECK_FALSE(pinned_requirement(f, "libcupti.so.13").has_value());  // an extra is not what torch needs
  CHECK_FALSE(pinned_requirement(f, "libfoo.so.1").has_value());
  CHECK(compare_driver("580", "580.0.0") == 0);
  CHECK(compare_driver("535.104.05", "525.60.13") == 1);
}
