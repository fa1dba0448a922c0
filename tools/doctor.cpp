// `cudashim doctor`: the command-line glue around diagnose().
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <iostream>

#include "tools/doctor.h"
#include "tools/input_files.h"

namespace cudashim::tools {
namespace {

// What nvidia-smi says of the first GPU: compute capability ("9.0" -> 90), driver release
// and name; sm 0 when there is no nvidia-smi, no driver or no GPU. Doctor must work with none.
struct SmiFacts {
  int sm = 0;
  std::string driver, name;
};

SmiFacts query_nvidia_smi() {
  SmiFacts out;
  FILE* pipe = popen("nvidia-smi --query-gpu=compute_cap,driver_version,name --format=csv,noheader 2>/dev/null", "r");
  if (pipe == nullptr) return out;
  char line[256] = {};
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  char rest[256];
  while (std::fgets(rest, sizeof rest, pipe) != nullptr) {  // drain the other GPUs' lines
  }
  const int status = pclose(pipe);
  if (!got || status != 0) return out;
  int major = 0, minor = 0;
  if (std::sscanf(line, "%d.%d", &major, &minor) != 2 || major <= 0 || major > 99 || minor < 0 || minor > 9) return out;
  out.sm = major * 10 + minor;
  std::string fields(line);
  while (!fields.empty() && (fields.back() == '\n' || fields.back() == '\r')) fields.pop_back();
  const auto c1 = fields.find(", ");
  const auto c2 = c1 == std::string::npos ? std::string::npos : fields.find(", ", c1 + 2);
  if (c2 != std::string::npos) {
    out.driver = fields.substr(c1 + 2, c2 - c1 - 2);
    out.name = fields.substr(c2 + 2);
  }
  return out;
}

}  // namespace

int parse_compute_capability(const std::string& text) {
  std::string t = text;
  for (const char* prefix : {"sm_", "compute_", "sm"})
    if (t.rfind(prefix, 0) == 0) {
      t = t.substr(std::string(prefix).size());
      break;
    }
  if (!t.empty() && (t.back() == 'a' || t.back() == 'f')) t.pop_back();  // sm_90a, sm_100f: same device
  int major = 0, minor = 0, used = 0;
  if (std::sscanf(t.c_str(), "%d.%d%n", &major, &minor, &used) == 2 && used == static_cast<int>(t.size()))
    return major > 0 && major < 100 && minor >= 0 && minor <= 9 ? major * 10 + minor : 0;
  int whole = 0;
  used = 0;
  if (std::sscanf(t.c_str(), "%d%n", &whole, &used) == 1 && used == static_cast<int>(t.size()) && whole >= 10 && whole < 1000)
    return whole;
  return 0;
}

int run_doctor(const DoctorOptions& options) {
  // Bad input is a usage error (exit 3, as `cudashim report`), never a finding: a mistyped path,
  // or something that is neither a folder nor a regular file (a FIFO would block the read).
  for (const auto& path : options.paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) continue;
    std::string why;
    if (!InputFile::open(path, why)) {
      fmt::print(stderr, "doctor: {}: {}; pass an ELF file, a folder or a site-packages folder\n", shown(path), why);
      return 3;
    }
  }
  if (!options.driver_version.empty() && !symbols::parse_driver_version(options.driver_version)) {
    fmt::print(stderr, "doctor: --driver-version {}: expected a driver release such as 535.104.05 or 580.95\n",
               shown(options.driver_version));
    return 3;
  }
  symbols::SearchEnv env;
  if (options.ld_library_path) {
    env.ld_library_path = *options.ld_library_path;
  } else if (const char* llp = std::getenv("LD_LIBRARY_PATH")) {
    env.ld_library_path = llp;
  }
  auto cache = symbols::read_ld_cache(options.ld_cache_path);
  if (cache.ok()) env.cache = std::move(cache).value();

  int sm = 0;
  std::string sm_source = "--sm";
  if (!options.sm.empty()) {
    sm = parse_compute_capability(options.sm);
    if (sm <= 0) {
      fmt::print(stderr, "doctor: --sm {}: expected a compute capability such as 90, 9.0 or sm_90\n", options.sm);
      return 3;
    }
  }
  const SmiFacts smi = query_nvidia_smi();
  if (options.sm.empty()) {
    sm = smi.sm;
    sm_source = "nvidia-smi";
  }
  if (sm <= 0) {
    sm = 90;
    sm_source = "assumed";
  }

  const bool tty = isatty(2) != 0;
  DoctorProgress progress;
  if (tty) {
    progress = [](std::size_t i, std::size_t n, const std::string& path) {
      fmt::print(stderr, "\r\033[Kdoctor: [{}/{}] {}", i + 1, n, path);
      std::fflush(stderr);
    };
  }
  HostFacts host;
  host.kernel_version_text = symbols::read_small_text(options.driver_version_file);
  host.kernel_version_source = options.driver_version_file;
  host.mountinfo_text = symbols::read_small_text(options.mountinfo_file).value_or("");
  host.nvml_driver_version = smi.driver;
  host.gpu_name = smi.name;
  host.getenv = [](const char* name) -> const char* { return std::getenv(name); };
  host.jobs = options.jobs;
  host.driver_version = options.driver_version;
  // Where forward-compatibility packages put their libcuda (cuda-compat-<major>-<minor>).
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/usr/local", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (n == "cuda" || n.rfind("cuda-", 0) == 0) host.driver_folders.push_back((it->path() / "compat").string());
  }
  std::sort(host.driver_folders.begin(), host.driver_folders.end());
  DoctorReport report = diagnose(options.paths, sm, sm_source, env, progress, host);
  if (tty) fmt::print(stderr, "\r\033[K");
  if (!cache.ok() && !options.json) fmt::print(stderr, "note: {} (the loader cache is left out)\n", cache.error());

  if (options.json) {
    std::cout << render_doctor_json(report);
  } else {
    const bool color = isatty(1) != 0 && std::getenv("NO_COLOR") == nullptr;
    std::cout << render_doctor_text(report, color, options.verbose);
  }
  std::cout.flush();
  return report.exit_code();
}

}  // namespace cudashim::tools
