// policy/rules/driver.cpp: see driver.h.
#include "policy/rules/driver.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "policy/rules/libraries.h"

namespace cudashim::policy {
using symbols::DriverVersion;
using symbols::KernelModule;
using symbols::LibcudaCopy;
namespace {

std::string_view base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The version of a copy: from its real file name, else from the name it was found under.
std::optional<DriverVersion> copy_version(const LibcudaCopy& c) {
  if (auto v = symbols::libcuda_file_version(base_name(c.real_path))) return v;
  return symbols::libcuda_file_version(base_name(c.path));
}

bool is_compat(const LibcudaCopy& c) { return symbols::in_compat_folder(c.path) || symbols::in_compat_folder(c.real_path); }
bool is_stub(const LibcudaCopy& c) { return is_stub_libcuda(c.path) || is_stub_libcuda(c.real_path); }

// Consumer GPUs: forward compatibility is for data-center GPUs (and a few NGC-ready RTX SKUs).
bool consumer_gpu(const std::string& name) {
  return name.find("GeForce") != std::string::npos || name.find("TITAN") != std::string::npos;
}

std::string describe(const LibcudaCopy& c) {
  std::string s = c.path;
  if (!c.real_path.empty() && c.real_path != c.path) s += " -> " + c.real_path;
  return s;
}

Finding make(FindingId id, std::string subject, std::string message) {
  return Finding{id, std::move(subject), std::move(message), {}};
}

// What the rules below share: the kernel module (when /proc says), the copy in use, the evidence line.
struct Bridge {
  const symbols::DriverBridgeInput& input;
  std::optional<KernelModule> kernel;
  const LibcudaCopy* in_use = nullptr;
  std::string kernel_line;
};

// 1. The kernel module against the user-mode driver in use.
void kernel_against_libcuda(const Bridge& b, std::vector<Finding>& out) {
  const auto& input = b.input;
  const auto& kernel = b.kernel;
  const LibcudaCopy* in_use = b.in_use;
  const std::string& kernel_line = b.kernel_line;
  if (kernel && in_use != nullptr) {
    const auto user = copy_version(*in_use);
    if (user && !(*user == kernel->version)) {
      const std::string kv = kernel->version.text, uv = user->text;
      if (!is_compat(*in_use)) {
        Finding f = make(FindingId::driver_user_kernel_mismatch, in_use->path,
                         "kernel module " + kv + " but user-mode libcuda " + uv + ": cuInit fails with "
                         "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803) or the driver misbehaves");
        f.evidence.push_back(kernel_line);
        f.evidence.push_back("libcuda.so.1 in use: " + describe(*in_use) + (in_use->bind_mounted ? " [bind-mounted from the host]" : " [in the image]"));
        f.evidence.push_back("not in a compat/ folder, so not a forward-compatibility package");
        out.push_back(std::move(f));
      } else if (kernel->version < *user) {
        const bool consumer = consumer_gpu(input.gpu_name);
        Finding f = make(consumer ? FindingId::driver_compat_unsupported : FindingId::driver_forward_compat, in_use->path,
                         consumer ? "forward-compatibility libcuda " + uv + " over kernel module " + kv + " on a " +
                                        input.gpu_name + ": cuInit fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)"
                                  : "forward compatibility in use: libcuda " + uv + " from a compat/ folder over kernel module " + kv);
        f.evidence.push_back(kernel_line);
        f.evidence.push_back("libcuda.so.1 in use: " + describe(*in_use));
        f.evidence.push_back("verified: the libcuda comes from a compat/ folder and is newer than the kernel module");
        if (input.gpu_name.empty())
          f.evidence.push_back("not verified: that the GPU is a data-center GPU (no GPU name given); on other GPUs cuInit fails with 804");
        else if (!consumer)
          f.evidence.push_back("GPU: " + input.gpu_name + " (not a GeForce/TITAN: a data-center GPU is assumed)");
        f.evidence.push_back("not verified: that the " + std::to_string(kernel->version.major) +
                             " branch is one NVIDIA supports for forward compatibility with this cuda-compat package");
        out.push_back(std::move(f));
      } else {
        Finding f = make(FindingId::driver_compat_unsupported, in_use->path,
                         "forward-compatibility libcuda " + uv + " is older than kernel module " + kv +
                             ": cuInit fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)");
        f.evidence.push_back(kernel_line);
        f.evidence.push_back("libcuda.so.1 in use: " + describe(*in_use));
        f.evidence.push_back("a compat package only helps when it is newer than the host's kernel module");
        out.push_back(std::move(f));
      }
    }
  }
}

// 2. NVML (it reports the kernel module's release) against /proc.
void nvml_against_kernel(const Bridge& b, std::vector<Finding>& out) {
  const auto& input = b.input;
  const auto& kernel = b.kernel;
  const std::string& kernel_line = b.kernel_line;
  if (kernel && !input.nvml_driver_version.empty()) {
    const auto nvml = symbols::parse_driver_version(input.nvml_driver_version);
    if (nvml && !(*nvml == kernel->version)) {
      Finding f = make(FindingId::driver_nvml_mismatch, "nvml",
                       "NVML reports driver " + nvml->text + " but the kernel module is " + kernel->version.text);
      f.evidence.push_back(kernel_line);
      f.evidence.push_back("NVML driver version: " + nvml->text);
      out.push_back(std::move(f));
    }
  }
}

// 3. Several releases of libcuda side by side (compat packages and link-time stubs aside).
void libcuda_releases(const Bridge& b, std::vector<Finding>& out) {
  const auto& input = b.input;
  const auto& kernel = b.kernel;
  const std::string& kernel_line = b.kernel_line;
  std::map<DriverVersion, std::vector<const LibcudaCopy*>> by_version;
  for (const auto& c : input.libcuda) {
    if (is_compat(c) || is_stub(c)) continue;
    if (auto v = copy_version(c)) by_version[*v].push_back(&c);
  }
  if (by_version.size() >= 2) {
    bool host = false, image = false;
    for (const auto& [v, copies] : by_version)
      for (const auto* c : copies) (c->bind_mounted ? host : image) = true;
    std::string message = std::to_string(by_version.size()) + " releases of libcuda side by side";
    if (host && image) message += ": the host's bind-mounted copy next to the image's own";
    Finding f = make(FindingId::libcuda_multiple_copies, "libcuda", message);
    if (kernel) f.evidence.push_back(kernel_line);
    for (const auto& [v, copies] : by_version)
      for (const auto* c : copies) {
        std::string line = v.text + ": " + describe(*c) + (c->bind_mounted ? " [bind-mounted from the host]" : " [in the image]");
        if (c->in_use) line += " [the loader picks this one]";
        if (kernel && v == kernel->version) line += " [matches the kernel module]";
        f.evidence.push_back(line);
      }
    out.push_back(std::move(f));
  }
}

}  // namespace

std::vector<Finding> driver_bridge_findings(const symbols::DriverBridgeInput& input) {
  Bridge b{input, std::nullopt, nullptr, ""};
  if (input.kernel_version_text) b.kernel = symbols::parse_kernel_module_version(*input.kernel_version_text);
  for (const auto& c : input.libcuda)
    if (c.in_use && b.in_use == nullptr) b.in_use = &c;
  b.kernel_line = b.kernel ? input.kernel_version_source + ": " + b.kernel->line : "";
  std::vector<Finding> out;
  kernel_against_libcuda(b, out);
  nvml_against_kernel(b, out);
  libcuda_releases(b, out);
  return out;
}

}  // namespace cudashim::policy
