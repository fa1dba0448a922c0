// `cudashim doctor` on tiny stand-ins for CUDA wheels, built by the tests: each scenario is
// a bug users hit, and the finding it must produce (id, severity, evidence, exit code).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/unit/symbols_fatbin_image.h"
#include "tests/unit/doctor_test_support.h"
#include "tests/unit/symbols_test_support.h"
#include "tools/doctor.h"

using namespace cudashim;
using namespace cudashim::symbols;
using namespace cudashim::tools;
using namespace symbols_test;
using namespace doctor_test;

namespace {

// A pip-like site-packages: cuSPARSE built against nvJitLink 12.3, RUNPATH to its sibling wheel.
struct FakeWheels {
  TempDir t;
  fs::path sp = t / "site-packages";
  fs::path cusparse, old_jit_dir = t / "old-nvjitlink";
  FakeWheels() {
    const std::string map = "libnvJitLink.so.12 { global: __nvJitLink*; local: *; };\n";
    fake_lib(sp / "nvidia/nvjitlink/lib", "libnvJitLink.so.12",
             "int __nvJitLinkAddData_12_1(void) { return 1; }\nint __nvJitLinkAddData_12_3(void) { return 3; }\n", map);
    fake_lib(old_jit_dir, "libnvJitLink.so.12", "int __nvJitLinkAddData_12_1(void) { return 1; }\n", map);
    cusparse = fake_lib(sp / "nvidia/cusparse/lib", "libcusparse.so.12",
                        "int __nvJitLinkAddData_12_3(void);\nint cusparseCreate(void) { return __nvJitLinkAddData_12_3(); }\n", "",
                        "-L" + q(sp / "nvidia/nvjitlink/lib") +
                            " -l:libnvJitLink.so.12 -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN:$ORIGIN/../../nvjitlink/lib'");
    fs::create_directories(sp / "nvidia_cusparse_cu12-12.2.0.103.dist-info");
    write_text(sp / "nvidia_cusparse_cu12-12.2.0.103.dist-info/RECORD",
               "nvidia/cusparse/lib/libcusparse.so.12,sha256=abc,123\nnvidia/__init__.py,,\n");
    fs::create_directories(sp / "nvidia_nvjitlink_cu12-12.3.101.dist-info");
    write_text(sp / "nvidia_nvjitlink_cu12-12.3.101.dist-info/RECORD", "nvidia/nvjitlink/lib/libnvJitLink.so.12,sha256=abc,1\n");
    write_text(sp / "unrelated.py", "print('not scanned')\n");
  }
};

}  // namespace

TEST_CASE("doctor: an old nvJitLink first on LD_LIBRARY_PATH breaks cuSPARSE", "[doctor]") {
  FakeWheels w;
  SECTION("the shortfall, the symbol, the file the loader picks and why") {
    const DoctorReport r = diagnose({w.cusparse.string()}, 90, "--sm", bare(w.old_jit_dir.string()));
    auto found = with_id(r, "library.versioned-symbol-shortfall");
    REQUIRE(found.size() == 1);
    const std::string text = all_evidence(*found[0]);
    INFO(text);
    CHECK(found[0]->info().severity == Severity::error);
    CHECK(found[0]->subject == w.cusparse.string());
    CHECK(text.find("undefined symbol: __nvJitLinkAddData_12_3, version libnvJitLink.so.12") != std::string::npos);
    CHECK(text.find("the loader picks " + (w.old_jit_dir / "libnvJitLink.so.12").string() + " [LD_LIBRARY_PATH]") !=
          std::string::npos);
    CHECK(text.find("needs nvJitLink >= 12.3") != std::string::npos);
    CHECK(r.exit_code() == 4);
    REQUIRE(r.libraries.size() == 1);
    REQUIRE(r.libraries[0].cuda_needed.size() == 1);
    CHECK(r.libraries[0].cuda_needed[0].reason == SearchReason::ld_library_path);
  }
  SECTION("without it, the wheel's own copy through RUNPATH: clean") {
    const DoctorReport r = diagnose({w.cusparse.string()}, 90, "--sm", bare());
    CHECK(with_id(r, "library.versioned-symbol-shortfall").empty());
    REQUIRE(r.libraries[0].cuda_needed.size() == 1);
    CHECK(r.libraries[0].cuda_needed[0].reason == SearchReason::runpath);
    CHECK(r.exit_code() == 0);  // only the note that no driver is installed
    CHECK(with_id(r, "driver.not-found").size() == 1);
  }
  SECTION("a site-packages folder: only nvidia/*/lib is read, versions come from the wheels' RECORD") {
    const DoctorReport r = diagnose({w.sp.string()}, 90, "--sm", bare());
    REQUIRE(r.libraries.size() == 2);
    for (const auto& lib : r.libraries) {
      REQUIRE(lib.cuda.has_value());
      if (lib.cuda->family == "cusparse") {
        CHECK(lib.version.version == "12.2.0.103");
        CHECK(lib.version.source == "wheel RECORD (nvidia_cusparse_cu12)");
      } else {
        CHECK(lib.cuda->family == "nvJitLink");
        CHECK(lib.version.version == "12.3.101");
      }
    }
  }
  SECTION("JSON and text outputs carry the id, severity, evidence and fix") {
    const DoctorReport r = diagnose({w.cusparse.string()}, 90, "--sm", bare(w.old_jit_dir.string()));
    auto j = nlohmann::json::parse(render_doctor_json(r));
    CHECK(j["summary"]["errors"] == 1);
    CHECK(j["summary"]["exit_code"] == 4);
    CHECK(j["findings"][0]["id"] == "library.versioned-symbol-shortfall");
    CHECK(j["findings"][0]["severity"] == "error");
    CHECK_FALSE(j["findings"][0]["fix"].get<std::string>().empty());
    CHECK(j["libraries"][0]["cuda_needed"][0]["reason"] == "LD_LIBRARY_PATH");
    CHECK(j["libraries"][0]["version"] == "12.2.0.103");
    const std::string text = render_doctor_text(r, false);
    CHECK(text.find("ERRORS\n  [library.versioned-symbol-shortfall] libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_3") !=
          std::string::npos);
    CHECK(text.find("    fix: Put a copy of the providing library") != std::string::npos);
    CHECK(text.find("libnvJitLink.so.12 => " + (w.old_jit_dir / "libnvJitLink.so.12").string() + " [LD_LIBRARY_PATH]") !=
          std::string::npos);
  }
}

TEST_CASE("doctor: copies and majors of one library across the scanned set", "[doctor]") {
  TempDir t;
  const std::string src = "int cudaMalloc(void) { return 0; }\n";
  fake_lib(t / "sys", "libcudart.so.12", src);
  fake_lib(t / "wheel", "libcudart.so.12", src);
  fake_lib(t / "cu13", "libcudart.so.13", src);
  const DoctorReport r = diagnose({t.path.string()}, 90, "--sm", bare());
  auto dup = with_id(r, "library.duplicate");
  REQUIRE(dup.size() == 1);
  CHECK(dup[0]->subject == "cudart.so.12");
  CHECK(dup[0]->evidence.size() == 2);
  auto mixed = with_id(r, "library.mixed-majors");
  REQUIRE(mixed.size() == 1);
  CHECK(mixed[0]->evidence.size() == 3);
  CHECK(r.exit_code() == 1);

  SECTION("one process loading two majors is an error") {
    const fs::path both = fake_lib(t / "app", "libapp.so", "int app(void) { return 0; }\n", "",
                                   "-Wl,--no-as-needed -L" + q(t / "wheel") + " -L" + q(t / "cu13") +
                                       " -l:libcudart.so.12 -l:libcudart.so.13 -Wl,--enable-new-dtags -Wl,-rpath," +
                                       (t / "wheel").string() + ":" + (t / "cu13").string());
    const DoctorReport p = diagnose({both.string()}, 90, "--sm", bare());
    auto in_process = with_id(p, "library.mixed-majors-in-process");
    REQUIRE(in_process.size() == 1);
    CHECK(in_process[0]->info().severity == Severity::error);
    CHECK(p.exit_code() == 4);
  }
}

TEST_CASE("doctor: the link-time stub libcuda on the search path", "[doctor]") {
  TempDir t;
  const fs::path stubs = t / "cuda/lib64/stubs";
  fake_lib(stubs, "libcuda.so.1", "int cuInit(unsigned f) { (void)f; return 34; }\n");
  fs::copy_file(stubs / "libcuda.so.1", stubs / "libcuda.so");
  const fs::path app = fake_lib(t / "app", "libapp.so", "int cuInit(unsigned);\nint app(void) { return cuInit(0); }\n", "",
                                "-L" + q(stubs) + " -l:libcuda.so.1");
  const DoctorReport r = diagnose({app.string()}, 90, "--sm", bare(stubs.string()));
  auto stub = with_id(r, "driver.stub-libcuda");
  REQUIRE(stub.size() >= 2);  // the app's own libcuda.so.1, and libcuda.so for Triton
  CHECK(all_evidence(*stub[0]).find("/stubs/libcuda.so.1 [LD_LIBRARY_PATH]") != std::string::npos);
  CHECK(with_id(r, "driver.not-found").empty());
  CHECK(r.exit_code() == 4);
}

TEST_CASE("doctor: cuDNN sub-libraries from another folder", "[doctor]") {
  TempDir t;
  const fs::path home = t / "cudnn/lib", other = t / "elsewhere";
  const fs::path cudnn = fake_lib(home, "libcudnn.so.9", "int cudnnCreate(void) { return 0; }\n", "",
                                  "-Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN'");
  fake_lib(home, "libcudnn_ops.so.9", "int ops(void) { return 0; }\n");
  fake_lib(home, "libcudnn_cnn.so.9", "int cnn(void) { return 0; }\n");
  fake_lib(other, "libcudnn_ops.so.9", "int ops(void) { return 1; }\n");

  CHECK(with_id(diagnose({cudnn.string()}, 90, "--sm", bare()), "library.cudnn-split-folders").empty());
  const DoctorReport r = diagnose({cudnn.string()}, 90, "--sm", bare(other.string()));
  auto split = with_id(r, "library.cudnn-split-folders");
  REQUIRE(split.size() == 1);
  const std::string text = all_evidence(*split[0]);
  INFO(text);
  CHECK(text.find("libcudnn_ops.so.9 => " + (other / "libcudnn_ops.so.9").string() + " [LD_LIBRARY_PATH]") != std::string::npos);
  CHECK(text.find("libcudnn_cnn.so.9 => " + (home / "libcudnn_cnn.so.9").string() + " [runpath") != std::string::npos);
}

TEST_CASE("doctor: fatbin coverage of the GPU", "[doctor]") {
  TempDir t;
  auto lib_with = [&](const std::string& name, const std::vector<FakeEntry>& entries) {
    std::vector<std::uint8_t> image;
    append_container(image, entries);
    return fake_lib(t / "k", name,
                    "__attribute__((section(\".nv_fatbin\"), used, aligned(8))) const unsigned char fb[] = {" + c_bytes(image) +
                        "};\nint k(void) { return 0; }\n");
  };
  const fs::path ptx_only = lib_with("libptx.so", {{2, 80}, {1, 80, 0x11, 1000, 64, 0, 8, 0}});
  const fs::path old_sass = lib_with("libold.so", {{2, 70}, {2, 80}});

  SECTION("SASS for sm_80 only plus compute_80 PTX on sm_90: JIT at first use") {
    const DoctorReport r = diagnose({ptx_only.string()}, 90, "--sm", bare());
    auto jit = with_id(r, "fatbin.no-sass");
    REQUIRE(jit.size() == 1);
    CHECK(jit[0]->info().severity == Severity::warning);
    CHECK(all_evidence(*jit[0]).find("1000 bytes of PTX") != std::string::npos);
    CHECK(r.libraries[0].coverage->kind == CoverageKind::ptx_jit);
    CHECK(r.exit_code() == 1);
    auto j = nlohmann::json::parse(render_doctor_json(r));
    CHECK(j["libraries"][0]["fatbin"]["arch_counts"]["sm_80"] == 1);
    CHECK(j["libraries"][0]["fatbin"]["arch_counts"]["compute_80"] == 1);
    CHECK(j["libraries"][0]["fatbin"]["coverage"] == "ptx_jit");
  }
  SECTION("the same on sm_86: SASS, clean") {
    const DoctorReport r = diagnose({ptx_only.string()}, 86, "--sm", bare());
    CHECK(with_id(r, "fatbin.no-sass").empty());
    CHECK(r.libraries[0].coverage->kind == CoverageKind::sass);
  }
  SECTION("sm_70 + sm_80 SASS and no PTX on sm_90: no kernel image") {
    const DoctorReport r = diagnose({old_sass.string()}, 90, "--sm", bare());
    auto none = with_id(r, "fatbin.no-kernel-image");
    REQUIRE(none.size() == 1);
    CHECK(none[0]->info().severity == Severity::error);
    CHECK(r.exit_code() == 4);
  }
  SECTION("with no GPU to ask, sm 90 is assumed and said so") {
    const DoctorReport r = diagnose({old_sass.string()}, 90, "assumed", bare());
    CHECK(with_id(r, "doctor.sm-assumed").size() == 1);
  }
}

TEST_CASE("doctor: bad input is reported, never a crash", "[doctor]") {
  TempDir t;
  write_text(t / "notelf.so", "hello");
  const fs::path good = fake_lib(t / "ok", "libok.so", "int ok(void) { return 0; }\n");
  copy_truncated(good, t / "libcut.so", 100);
  const DoctorReport r = diagnose({(t / "missing").string(), (t / "notelf.so").string(), (t / "libcut.so").string(), good.string()},
                                  90, "--sm", bare());
  auto bad = with_id(r, "doctor.unreadable-file");
  REQUIRE(bad.size() == 3);
  for (const auto* f : bad) CHECK(f->message.find(t.path.string()) != std::string::npos);
  CHECK(r.libraries.size() == 1);
  CHECK(r.exit_code() == 1);
  CHECK_FALSE(render_doctor_text(r, false).empty());
}

TEST_CASE("doctor: a file or symbol name that is not UTF-8 is written as \\xNN in the JSON", "[doctor]") {
  // nlohmann's dump() throws on the first string that is not UTF-8: doctor --json aborted.
  TempDir t;
  const fs::path dir = t / "wheel\xff";
  const std::string map = "libnvJitLink.so.12 { global: __nvJitLink*; local: *; };\n";
  const std::string sym = "int add(void) __asm__(\"__nvJitLinkAddData_\\xfe\");\n";
  fake_lib(dir / "new", "libnvJitLink.so.12", sym + "int add(void) { return 3; }\n", map);
  fake_lib(dir / "old", "libnvJitLink.so.12", "int __nvJitLinkAddData_12_1(void) { return 1; }\n", map);
  const fs::path lib = fake_lib(dir / "cusparse", "libcusparse.so.12", sym + "int cusparseCreate(void) { return add(); }\n", "",
                                "-L" + q(dir / "new") + " -l:libnvJitLink.so.12");
  const DoctorReport r = diagnose({lib.string()}, 90, "--sm", bare((dir / "old").string()));
  REQUIRE(with_id(r, "library.versioned-symbol-shortfall").size() == 1);
  std::string json;
  REQUIRE_NOTHROW(json = render_doctor_json(r));
  const auto j = nlohmann::json::parse(json);  // valid UTF-8: nlohmann refuses anything else
  CHECK(j["libraries"][0]["path"].get<std::string>().find("wheel\\xff") != std::string::npos);
  CHECK(json.find("__nvJitLinkAddData_\\\\xfe") != std::string::npos);  // the symbol, in the evidence
}

TEST_CASE("doctor: --sm accepts the usual spellings", "[doctor]") {
  CHECK(parse_compute_capability("90") == 90);
  CHECK(parse_compute_capability("9.0") == 90);
  CHECK(parse_compute_capability("sm_90") == 90);
  CHECK(parse_compute_capability("sm_90a") == 90);
  CHECK(parse_compute_capability("compute_86") == 86);
  CHECK(parse_compute_capability("12.0") == 120);
  CHECK(parse_compute_capability("sm_120") == 120);
  CHECK(parse_compute_capability("") == 0);
  CHECK(parse_compute_capability("ninety") == 0);
  CHECK(parse_compute_capability("9.0.1") == 0);
  CHECK(parse_compute_capability("-90") == 0);
}

// --- the driver bridge and Triton's toolchain, through doctor

TEST_CASE("doctor: the image's own libcuda against the host's kernel module", "[doctor][driver_bridge]") {
  TempDir t;
  // The image ships libcuda 575.57.08 (first on LD_LIBRARY_PATH); the host mounted 580.95.05.
  const fs::path image = fake_lib(t / "image", "libcuda.so.575.57.08", "int cuInit(unsigned f) { return 0; }\n");
  fs::create_symlink("libcuda.so.575.57.08", t / "image/libcuda.so.1");
  const fs::path host_lib = fake_lib(t / "host", "libcuda.so.580.95.05", "int cuInit(unsigned f) { return 0; }\n");
  fs::create_symlink("libcuda.so.580.95.05", t / "host/libcuda.so.1");
  const fs::path app = fake_lib(t / "app", "libapp.so", "int cuInit(unsigned);\nint go(void) { return cuInit(0); }\n", "",
                                "-L" + q(t / "image") + " -l:libcuda.so.1");
  HostFacts host;
  host.kernel_version_text = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@x)\n";
  host.kernel_version_source = "/proc/driver/nvidia/version";
  host.mountinfo_text = "640 622 259:1 / " + fs::canonical(host_lib).string() + " ro,nosuid - ext4 /dev/nvme0n1p1 rw\n";
  host.driver_folders = {(t / "host").string()};
  const DoctorReport r = diagnose({app.string()}, 90, "--sm", bare((t / "image").string()), {}, host);
  auto mismatch = with_id(r, "driver.user-kernel-mismatch");
  REQUIRE(mismatch.size() == 1);
  const std::string text = all_evidence(*mismatch[0]);
  INFO(text);
  CHECK(text.find("kernel module 580.95.05 but user-mode libcuda 575.57.08") != std::string::npos);
  CHECK(text.find(fs::canonical(image).string()) != std::string::npos);
  auto copies = with_id(r, "driver.libcuda-multiple-copies");
  REQUIRE(copies.size() == 1);
  CHECK(all_evidence(*copies[0]).find("[bind-mounted from the host] [matches the kernel module]") != std::string::npos);
  CHECK(r.exit_code() == 4);
  auto j = nlohmann::json::parse(render_doctor_json(r));
  CHECK(j["driver"]["kernel_module"] == "580.95.05");
  CHECK(j["driver"]["open_kernel_module"] == true);
  CHECK(j["driver"]["libcuda_in_use"] == fs::canonical(image).string());
  SECTION("with the host's copy first, all is well") {
    const DoctorReport ok = diagnose({app.string()}, 90, "--sm", bare((t / "host").string()), {}, host);
    CHECK(with_id(ok, "driver.user-kernel-mismatch").empty());
  }
  SECTION("on a host without the kernel module (no /proc file) nothing is said about the bridge") {
    HostFacts cpu = host;
    cpu.kernel_version_text.reset();
    const DoctorReport quiet = diagnose({app.string()}, 90, "--sm", bare((t / "image").string()), {}, cpu);
    CHECK(with_id(quiet, "driver.user-kernel-mismatch").empty());
    CHECK(with_id(quiet, "driver.libcuda-multiple-copies").size() == 1);  // two releases are still two releases
  }
}

TEST_CASE("doctor: Triton in a scanned site-packages", "[doctor][triton]") {
  FakeWheels w;
  const fs::path bin = w.sp / "triton/backends/nvidia/bin";
  fs::create_directories(bin);
  write_text(bin / "ptxas", "#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n");
  fs::permissions(bin / "ptxas", fs::perms::owner_all);
  write_text(w.sp / "triton/backends/nvidia/driver.py", "libraries = ['libcuda.so.1']\n");
  fs::create_directories(w.sp / "triton-3.1.0.dist-info");
  SECTION("an sm_100 GPU: the bundled ptxas (CUDA 12.4) cannot target it") {
    const DoctorReport r = diagnose({w.sp.string()}, 100, "--sm", bare());
    auto bad = with_id(r, "triton.ptxas-unsupported-sm");
    REQUIRE(bad.size() == 1);
    CHECK(bad[0]->message.find("sm_100 needs ptxas from CUDA 12.8 or newer; set TRITON_PTXAS_PATH") != std::string::npos);
    CHECK(r.exit_code() == 4);
    REQUIRE(r.tritons.size() == 1);
    CHECK(r.tritons[0].version == "3.1.0");
    CHECK(r.tritons[0].ptxas_version == "12.4.131");
    auto j = nlohmann::json::parse(render_doctor_json(r));
    CHECK(j["triton"][0]["ptxas"] == (bin / "ptxas").string());
    CHECK(r.libraries.size() == 2);  // ptxas is a tool, not one of the environment's libraries
  }
  SECTION("an sm_90 GPU: only the summary note") {
    const DoctorReport r = diagnose({w.sp.string()}, 90, "--sm", bare());
    CHECK(with_id(r, "triton.ptxas-unsupported-sm").empty());
    CHECK(with_id(r, "triton.toolchain").size() == 1);
  }
  SECTION("TRITON_PTXAS_PATH from the environment, read through HostFacts::getenv") {
    HostFacts host;
    const std::string bad = (w.t / "no/ptxas").string();
    host.getenv = [&](const char* n) -> const char* { return std::string(n) == "TRITON_PTXAS_PATH" ? bad.c_str() : nullptr; };
    const DoctorReport r = diagnose({w.sp.string()}, 90, "--sm", bare(), {}, host);
    auto env = with_id(r, "triton.env-path-bad");
    REQUIRE(env.size() == 1);
    CHECK(env[0]->message.find(bad + " is no such file") != std::string::npos);
  }
}

TEST_CASE("doctor: the report does not depend on the number of worker threads", "[doctor]") {
  FakeWheels w;
  std::string previous;
  for (int jobs : {1, 2, 7}) {
    HostFacts host;
    host.jobs = jobs;
    const std::string json = render_doctor_json(diagnose({w.sp.string(), w.old_jit_dir.string()}, 90, "--sm", bare(), {}, host));
    if (!previous.empty()) CHECK(json == previous);
    previous = json;
  }
}
