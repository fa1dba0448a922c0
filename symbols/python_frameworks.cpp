// python_frameworks.cpp: torch, JAX and CuPy as their dist-info and version files describe them.
#include "symbols/python_frameworks.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>
#include <system_error>

#include "symbols/driver_bridge.h"  // read_small_text: bounded, never a FIFO

namespace cudashim::symbols {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxDirEntries = 20000;  // entries of one site-packages looked at

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// A project name as PEP 503 compares them: lower case, runs of '-', '_', '.' as one '-'.
std::string normalized(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') out.push_back('-');
    } else {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// The site-packages folders `arg` stands for: itself when it holds dist-info folders, a folder
// above it that does (up to four levels: torch/lib), or a venv's lib/python3.*/site-packages.
std::vector<fs::path> site_packages_of(const std::string& arg) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::path p = fs::absolute(arg, ec).lexically_normal();
  if (ec) return out;
  auto holds_dist_info = [](const fs::path& dir) {
    std::error_code e;
    std::size_t n = 0;
    for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, e), end; !e && it != end && n < kMaxDirEntries;
         it.increment(e), ++n) {
      const std::string name = it->path().filename().string();
      if (name.size() > 10 && name.compare(name.size() - 10, 10, ".dist-info") == 0) return true;
    }
    return false;
  };
  for (const char* lib : {"lib", "lib64"}) {
    std::error_code e;
    for (fs::directory_iterator it(p / lib, e), end; !e && it != end; it.increment(e))
      if (it->path().filename().string().rfind("python", 0) == 0 && is_dir(it->path() / "site-packages"))
        out.push_back(it->path() / "site-packages");
  }
  if (!out.empty()) return out;
  fs::path dir = is_dir(p) ? p : p.parent_path();
  for (int up = 0; up < 5 && !dir.empty(); ++up) {
    if (holds_dist_info(dir)) return {dir};
    if (dir == dir.root_path()) break;
    dir = dir.parent_path();
  }
  return out;
}

// Calls fn(path, name without ".dist-info") for each dist-info folder of `site` (bounded walk).
template <typename Fn>
void for_each_dist_info(const fs::path& site, Fn&& fn) {
  std::error_code ec;
  std::size_t n = 0;
  for (fs::directory_iterator it(site, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end && n < kMaxDirEntries;
       it.increment(ec), ++n) {
    const std::string name = it->path().filename().string();
    if (name.size() > 10 && name.compare(name.size() - 10, 10, ".dist-info") == 0) fn(it->path(), name.substr(0, name.size() - 10));
  }
}

// The dist-info folders of `site` whose project is `project` (normalized), sorted.
std::vector<fs::path> dist_infos(const fs::path& site, const std::string& project) {
  std::vector<fs::path> out;
  for_each_dist_info(site, [&](const fs::path& p, const std::string& stem) {
    if (normalized(stem.substr(0, stem.find('-'))) == project) out.push_back(p);
  });
  std::sort(out.begin(), out.end());
  return out;
}

// Every dist-info project name of `site` starting with `prefix` (normalized), sorted.
std::vector<std::string> projects_starting(const fs::path& site, const std::string& prefix) {
  std::set<std::string> out;
  for_each_dist_info(site, [&](const fs::path&, const std::string& stem) {
    const std::string project = normalized(stem.substr(0, stem.find('-')));
    if (project.rfind(prefix, 0) == 0) out.insert(project);
  });
  return {out.begin(), out.end()};
}

// Reads METADATA's Version and Requires-Dist into `f`.
void read_metadata(const fs::path& dist_info, FrameworkInfo& f) {
  const auto text = symbols::read_small_text((dist_info / "METADATA").string());
  if (!text) {
    const std::string stem = dist_info.filename().string();
    const std::size_t dash = stem.find('-');
    if (dash != std::string::npos) f.version = stem.substr(dash + 1, stem.size() - dash - 1 - 10);
    return;
  }
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line == "\r") break;  // the headers end at the first empty line
    if (line.rfind("Version:", 0) == 0) f.version = trim(line.substr(8));
    if (line.rfind("Requires-Dist:", 0) == 0) f.requires_dist.push_back(trim(line.substr(14)));
  }
}

// "cupy-cuda12x" -> "12", "jax-cuda13-plugin" -> "13": the CUDA major a project name carries.
std::string cuda_major_in(const std::string& project) {
  const std::size_t at = project.find("cuda");
  if (at == std::string::npos) return "";
  std::string digits;
  for (std::size_t i = at + 4; i < project.size() && std::isdigit(static_cast<unsigned char>(project[i])); ++i) digits += project[i];
  return digits;
}

}  // namespace

std::string torch_version_py_cuda(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cuda", 0) != 0) continue;
    std::size_t i = 4;
    if (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_')) continue;  // cuda_home, ...
    const std::size_t eq = line.find('=', i);
    if (eq == std::string::npos) continue;
    const std::string value = trim(line.substr(eq + 1));
    if (value.size() >= 2 && (value[0] == '\'' || value[0] == '"')) {
      const std::size_t close = value.find(value[0], 1);
      if (close != std::string::npos) return value.substr(1, close - 1);
    }
    return "";  // None: a CPU build
  }
  return "";
}

std::vector<FrameworkInfo> find_frameworks(const std::vector<std::string>& paths) {
  std::vector<fs::path> sites;
  std::set<std::string> seen;
  for (const auto& arg : paths)
    for (const auto& site : site_packages_of(arg)) {
      std::error_code ec;
      const std::string key = fs::weakly_canonical(site, ec).string();
      if (seen.insert(ec ? site.string() : key).second) sites.push_back(site);
    }
  std::vector<FrameworkInfo> out;
  for (const char* name : {"torch", "jax", "cupy"}) {
    for (const auto& site : sites) {
      std::vector<fs::path> infos;
      if (std::string(name) == "cupy") {
        for (const auto& project : projects_starting(site, "cupy"))
          for (const auto& d : dist_infos(site, project)) infos.push_back(d);
      } else {
        infos = dist_infos(site, name);
      }
      for (const auto& info : infos) {
        FrameworkInfo f;
        f.name = name;
        f.site_packages = site.string();
        read_metadata(info, f);
        if (f.name == "torch") {
          if (const auto v = symbols::read_small_text((site / "torch" / "version.py").string())) {
            f.cuda = torch_version_py_cuda(*v);
            f.cuda_source = "torch/version.py";
          }
        } else if (f.name == "jax") {
          for (const auto& plugin : projects_starting(site, "jax-cuda"))
            if (f.cuda.empty() && !(f.cuda = cuda_major_in(plugin)).empty()) f.cuda_source = "dist-info name (" + plugin + ")";
        } else {
          const std::string project = normalized(info.filename().string().substr(0, info.filename().string().find('-')));
          f.cuda = cuda_major_in(project);
          if (!f.cuda.empty()) f.cuda_source = "dist-info name (" + project + ")";
        }
        out.push_back(std::move(f));
      }
    }
  }
  return out;
}

std::optional<std::string> pinned_requirement(const FrameworkInfo& framework, const std::string& soname) {
  if (soname.rfind("lib", 0) != 0) return std::nullopt;
  const std::string stem = soname.substr(3, soname.find(".so") == std::string::npos ? std::string::npos : soname.find(".so") - 3);
  const char* project = nullptr;
#define CUDASHIM_CUDA_WHEEL(STEM, PROJECT)                                                                   \
  if (project == nullptr && (stem == STEM || stem.rfind(std::string(STEM) + "_", 0) == 0)) project = PROJECT;
#include "catalog/cuda_wheels.def"
  if (project == nullptr) return std::nullopt;
  const std::string want = project;
  for (const auto& req : framework.requires_dist) {
    const std::string spec = trim(req.substr(0, req.find(';')));
    const std::size_t end = spec.find_first_of(" <>=!~[(");
    const std::string name = normalized(spec.substr(0, end));
    if (req.find("extra ==") != std::string::npos) continue;  // an optional extra, not what the framework needs
    if (name == want || name.rfind(want + "-cu", 0) == 0) {
      std::string out;
      for (char c : spec)
        if (c != ' ') out.push_back(c);
      return out;
    }
  }
  return std::nullopt;
}

}  // namespace cudashim::symbols
