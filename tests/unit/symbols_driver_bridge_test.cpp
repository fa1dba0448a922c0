// The container's driver bridge: crafted /proc/driver/nvidia/version texts (both kernel module
// flavours), libcuda file names, mount tables and copies, and the finding each situation gives.
#include <unistd.h>

#include "policy/rules/driver.h"
#include "symbols/driver_bridge.h"
#include "tests/unit/symbols_test_support.h"

using namespace cudashim;
using namespace cudashim::symbols;
using namespace symbols_test;
using cudashim::policy::driver_bridge_findings;

namespace {

// The two formats the driver writes (proprietary and open kernel module).
const char* kProprietary =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Nov 20 10:55:43 UTC 2025\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
const char* kOpen =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U16-I3-B03-4-3)  "
    "Tue Sep 23 09:54:38 UTC 2025\nGCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n";

// Copies: callers pass temporaries.
std::vector<Finding> with_id(const std::vector<Finding>& fs, const std::string& id) {
  std::vector<Finding> out;
  for (const auto& f : fs)
    if (id == f.info().name) out.push_back(f);
  return out;
}

std::string text_of(const Finding& f) {
  std::string s = f.message + "\n";
  for (const auto& e : f.evidence) s += e + "\n";
  return s;
}

LibcudaCopy copy(const std::string& path, bool in_use, bool mounted = false) {
  return LibcudaCopy{path, path, mounted, in_use};
}

}  // namespace

TEST_CASE("driver bridge: the kernel module's version file", "[driver_bridge]") {
  SECTION("proprietary module") {
    auto k = parse_kernel_module_version(kProprietary);
    REQUIRE(k.has_value());
    CHECK(k->version.text == "580.159.04");
    CHECK(k->version.major == 580);
    CHECK(k->version.minor == 159);
    CHECK(k->version.patch == 4);
    CHECK_FALSE(k->open);
  }
  SECTION("open module: 'for x86_64' before the version, 'Release Build' after it") {
    auto k = parse_kernel_module_version(kOpen);
    REQUIRE(k.has_value());
    CHECK(k->version.text == "580.95.05");
    CHECK(k->open);
    auto arm = parse_kernel_module_version("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release Build\n");
    REQUIRE(arm.has_value());
    CHECK(arm->version.text == "570.86.15");
  }
  SECTION("garbage, an empty file, a line without a version: nothing") {
    CHECK_FALSE(parse_kernel_module_version("").has_value());
    CHECK_FALSE(parse_kernel_module_version("GCC version: 12.2.0\n").has_value());
    CHECK_FALSE(parse_kernel_module_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  unknown\n").has_value());
    CHECK_FALSE(parse_kernel_module_version(std::string(5000, '\xff')).has_value());
  }
}

TEST_CASE("driver bridge: versions from file names and NVML strings", "[driver_bridge]") {
  CHECK(libcuda_file_version("libcuda.so.580.159.04")->text == "580.159.04");
  CHECK(libcuda_file_version("libcuda.so.550.54")->minor == 54);
  CHECK_FALSE(libcuda_file_version("libcuda.so.1").has_value());
  CHECK_FALSE(libcuda_file_version("libcuda.so").has_value());
  CHECK_FALSE(libcuda_file_version("libcudart.so.12.9.79").has_value());
  CHECK_FALSE(libcuda_file_version("libcuda.so.580.").has_value());
  CHECK(parse_driver_version("535.104.12").has_value());
  CHECK_FALSE(parse_driver_version("12.9").has_value());  // a CUDA version, not a driver release
  CHECK_FALSE(parse_driver_version("580.95.05 ").has_value());
  CHECK(*parse_driver_version("470.57.02") < *parse_driver_version("535.104.12"));
  CHECK(in_compat_folder("/usr/local/cuda/compat/libcuda.so.580.65.06"));
  CHECK(in_compat_folder("/usr/local/cuda-12.8/compat/lib.real/libcuda.so.570.124.06"));
  CHECK_FALSE(in_compat_folder("/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05"));
  CHECK_FALSE(in_compat_folder("/opt/compat"));  // the file itself, not a folder
}

TEST_CASE("driver bridge: the mount table tells the host's bind-mounted files", "[driver_bridge]") {
  const std::string mountinfo =
      "622 600 0:52 / / rw,relatime master:1 - overlay overlay rw,lowerdir=/x\n"
      "640 622 259:1 /usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05 /usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05 "
      "ro,nosuid,nodev,relatime master:1 - ext4 /dev/nvme0n1p1 rw\n"
      "641 622 259:1 /data /mnt/my\\040data rw - ext4 /dev/nvme0n1p1 rw\n"
      "garbage\n";
  auto m = mount_points(mountinfo);
  REQUIRE(m.size() == 3);
  CHECK(m[1] == "/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05");
  CHECK(m[2] == "/mnt/my data");
}

TEST_CASE("driver bridge: findings", "[driver_bridge]") {
  DriverBridgeInput in;
  in.kernel_version_text = kOpen;  // 580.95.05
  SECTION("the same release in the kernel and in user mode: nothing") {
    in.libcuda = {copy("/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05", true, true)};
    in.nvml_driver_version = "580.95.05";
    CHECK(driver_bridge_findings(in).empty());
  }
  SECTION("the image's own older libcuda in use: an error with both versions, next to the host's copy") {
    in.libcuda = {copy("/usr/lib/x86_64-linux-gnu/libcuda.so.575.57.08", true),
                  copy("/usr/local/nvidia/lib64/libcuda.so.580.95.05", false, true)};
    auto fs = driver_bridge_findings(in);
    auto mismatch = with_id(fs, "driver.user-kernel-mismatch");
    REQUIRE(mismatch.size() == 1);
    CHECK(mismatch[0].info().severity == Severity::error);
    const std::string t = text_of(mismatch[0]);
    INFO(t);
    CHECK(t.find("kernel module 580.95.05 but user-mode libcuda 575.57.08") != std::string::npos);
    CHECK(t.find("Open Kernel Module") != std::string::npos);
    auto copies = with_id(fs, "driver.libcuda-multiple-copies");
    REQUIRE(copies.size() == 1);
    const std::string c = text_of(copies[0]);
    INFO(c);
    CHECK(c.find("the host's bind-mounted copy next to the image's own") != std::string::npos);
    CHECK(c.find("580.95.05: /usr/local/nvidia/lib64/libcuda.so.580.95.05 [bind-mounted from the host] [matches the kernel module]") !=
          std::string::npos);
    CHECK(c.find("575.57.08: /usr/lib/x86_64-linux-gnu/libcuda.so.575.57.08 [in the image] [the loader picks this one]") !=
          std::string::npos);
  }
  SECTION("forward compatibility: a newer compat libcuda is info on a data-center GPU, with what was not verified") {
    in.kernel_version_text = kProprietary;  // 580.159.04
    in.libcuda = {copy("/usr/local/cuda-13.1/compat/libcuda.so.590.44.01", true),
                  copy("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04", false, true)};
    auto fs = driver_bridge_findings(in);
    REQUIRE(with_id(fs, "driver.user-kernel-mismatch").empty());
    CHECK(with_id(fs, "driver.libcuda-multiple-copies").empty());  // the compat copy is meant to be there
    auto fwd = with_id(fs, "driver.forward-compat");
    REQUIRE(fwd.size() == 1);
    CHECK(fwd[0].info().severity == Severity::info);
    const std::string t = text_of(fwd[0]);
    INFO(t);
    CHECK(t.find("libcuda 590.44.01 from a compat/ folder over kernel module 580.159.04") != std::string::npos);
    CHECK(t.find("not verified: that the GPU is a data-center GPU") != std::string::npos);
    CHECK(t.find("not verified: that the 580 branch") != std::string::npos);
    SECTION("on a GeForce: error 804") {
      in.gpu_name = "NVIDIA GeForce RTX 4090";
      auto bad = with_id(driver_bridge_findings(in), "driver.compat-unsupported");
      REQUIRE(bad.size() == 1);
      CHECK(bad[0].message.find("(804)") != std::string::npos);
    }
  }
  SECTION("a compat libcuda older than the kernel module: error 803") {
    in.libcuda = {copy("/usr/local/cuda/compat/libcuda.so.570.124.06", true)};
    auto bad = with_id(driver_bridge_findings(in), "driver.compat-unsupported");
    REQUIRE(bad.size() == 1);
    CHECK(bad[0].info().severity == Severity::error);
    CHECK(bad[0].message.find("570.124.06 is older than kernel module 580.95.05") != std::string::npos);
    CHECK(bad[0].message.find("(803)") != std::string::npos);
  }
  SECTION("NVML reporting another release than /proc") {
    in.nvml_driver_version = "575.57.08";
    auto nvml = with_id(driver_bridge_findings(in), "driver.nvml-mismatch");
    REQUIRE(nvml.size() == 1);
    CHECK(nvml[0].message == "NVML reports driver 575.57.08 but the kernel module is 580.95.05");
  }
  SECTION("no kernel module (a CPU host) and one copy: nothing; an unparsable file changes nothing") {
    in.kernel_version_text.reset();
    in.libcuda = {copy("/usr/lib/x86_64-linux-gnu/libcuda.so.575.57.08", true)};
    CHECK(driver_bridge_findings(in).empty());
    in.kernel_version_text = "not the driver's file\n";
    CHECK(driver_bridge_findings(in).empty());
  }
}

TEST_CASE("driver bridge: libcuda copies found in real folders", "[driver_bridge]") {
  TempDir t;
  fs::create_directories(t / "image");
  fs::create_directories(t / "host");
  write_text(t / "image/libcuda.so.575.57.08", "image");
  fs::create_symlink("libcuda.so.575.57.08", t / "image/libcuda.so.1");
  write_text(t / "host/libcuda.so.580.95.05", "host");
  fs::create_symlink("libcuda.so.580.95.05", t / "host/libcuda.so.1");
  const std::string host_file = fs::canonical(t / "host/libcuda.so.580.95.05").string();
  auto copies = find_libcuda_copies({(t / "image").string(), (t / "host").string(), (t / "missing").string()},
                                    (t / "image/libcuda.so.1").string(), {host_file});
  REQUIRE(copies.size() == 2);  // each real file once
  CHECK(copies[0].in_use);
  CHECK_FALSE(copies[0].bind_mounted);
  CHECK(fs::path(copies[0].real_path).filename() == "libcuda.so.575.57.08");
  CHECK_FALSE(copies[1].in_use);
  CHECK(copies[1].bind_mounted);
  SECTION("read from files, as the CLI does") {
    write_text(t / "version", kProprietary);
    write_text(t / "mountinfo", "1 0 0:1 / " + host_file + " ro - ext4 /dev/x rw\n");
    auto in = read_driver_bridge_input((t / "version").string(), (t / "mountinfo").string(),
                                       {(t / "image").string(), (t / "host").string()}, (t / "image/libcuda.so.1").string());
    REQUIRE(in.kernel_version_text.has_value());
    auto fs = driver_bridge_findings(in);
    CHECK(with_id(fs, "driver.user-kernel-mismatch").size() == 1);
    CHECK(with_id(fs, "driver.libcuda-multiple-copies").size() == 1);
    auto none = read_driver_bridge_input((t / "no-such-file").string(), "", {}, "");
    CHECK_FALSE(none.kernel_version_text.has_value());
    CHECK(driver_bridge_findings(none).empty());
  }
}
