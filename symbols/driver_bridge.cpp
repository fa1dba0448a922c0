// symbols/driver_bridge.cpp: the driver bridge's facts (see driver_bridge.h); its findings are
// policy/rules/driver.cpp.
#include "symbols/driver_bridge.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "symbols/bounded_read.h"

namespace cudashim::symbols {

std::optional<DriverVersion> parse_driver_version(std::string_view text) {
  DriverVersion v;
  int parts[3] = {0, 0, 0};
  int count = 0;
  std::size_t i = 0;
  while (i < text.size() && count < 3) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    long n = 0;
    std::size_t digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 6; ++i, ++digits) n = n * 10 + (text[i] - '0');
    if (i < text.size() && text[i] >= '0' && text[i] <= '9') return std::nullopt;  // absurdly long
    parts[count++] = static_cast<int>(n);
    if (i == text.size()) break;
    if (text[i] != '.') return std::nullopt;
    ++i;
    if (i == text.size()) return std::nullopt;  // "580."
  }
  if (i != text.size() || count < 2 || parts[0] < 100 || parts[0] > 9999) return std::nullopt;
  v.major = parts[0];
  v.minor = parts[1];
  v.patch = parts[2];
  v.text = std::string(text);
  return v;
}

std::optional<KernelModule> parse_kernel_module_version(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("NVRM version:", 0) != 0) continue;
    const std::size_t module = line.find("Kernel Module");
    if (module == std::string_view::npos) continue;
    // The first token after "Kernel Module" (and "for <arch>") that reads as a version.
    std::istringstream words{std::string(line.substr(module))};
    std::string word;
    while (words >> word) {
      if (auto v = parse_driver_version(word)) {
        KernelModule k;
        k.version = *v;
        k.open = line.find("Open Kernel Module") != std::string_view::npos;
        k.line = std::string(line);
        return k;
      }
    }
  }
  return std::nullopt;
}

std::optional<DriverVersion> libcuda_file_version(std::string_view file_name) {
  static constexpr std::string_view kPrefix = "libcuda.so.";
  if (file_name.rfind(kPrefix, 0) != 0) return std::nullopt;
  auto v = parse_driver_version(file_name.substr(kPrefix.size()));
  if (!v) return std::nullopt;  // "libcuda.so.1": the soname, no release in it
  return v;
}

bool in_compat_folder(std::string_view path) {
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) break;  // the last component is the file itself
    if (path.substr(start, end - start) == "compat") return true;
    start = end + 1;
  }
  return false;
}

std::vector<std::string> mount_points(std::string_view mountinfo) {
  std::vector<std::string> out;
  std::istringstream in{std::string(mountinfo)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string f;
    for (int i = 0; i < 5 && (fields >> f); ++i) {
      if (i != 4) continue;
      std::string decoded;  // the kernel escapes space, tab, newline and backslash as \ooo
      for (std::size_t k = 0; k < f.size(); ++k) {
        if (f[k] == '\\' && k + 3 < f.size() && f[k + 1] >= '0' && f[k + 1] <= '3' && f[k + 2] >= '0' && f[k + 2] <= '7' && f[k + 3] >= '0' && f[k + 3] <= '7') {
          decoded += static_cast<char>((f[k + 1] - '0') * 64 + (f[k + 2] - '0') * 8 + (f[k + 3] - '0'));
          k += 3;
        } else {
          decoded += f[k];
        }
      }
      out.push_back(std::move(decoded));
    }
  }
  return out;
}

std::vector<LibcudaCopy> find_libcuda_copies(const std::vector<std::string>& folders, const std::string& in_use,
                                             const std::vector<std::string>& mount_list) {
  std::vector<LibcudaCopy> out;
  const std::set<std::string> mounts(mount_list.begin(), mount_list.end());
  auto real = [](const std::string& p) {
    char buf[PATH_MAX];
    return realpath(p.c_str(), buf) != nullptr ? std::string(buf) : p;
  };
  auto mounted = [&](const LibcudaCopy& c) { return mounts.count(c.path) != 0 || mounts.count(c.real_path) != 0; };
  const std::string in_use_real = in_use.empty() ? "" : real(in_use);
  std::set<std::string> seen;
  for (const auto& folder : folders) {
    DIR* d = opendir(folder.c_str());
    if (d == nullptr) continue;
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.rfind("libcuda.so", 0) == 0) names.push_back(n);
      if (names.size() > 256) break;
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    const std::string dir = folder.size() > 1 && folder.back() == '/' ? folder.substr(0, folder.size() - 1) : folder;
    for (const auto& n : names) {
      LibcudaCopy c;
      c.path = dir + "/" + n;
      struct stat st {};
      if (stat(c.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      c.real_path = real(c.path);
      if (!seen.insert(c.real_path).second) continue;  // the same file under another name
      c.bind_mounted = mounted(c);
      c.in_use = !in_use_real.empty() && c.real_path == in_use_real;
      out.push_back(std::move(c));
    }
  }
  if (!in_use.empty() && seen.count(in_use_real) == 0) {  // the loader's pick, from a folder not listed
    LibcudaCopy c;
    c.path = in_use;
    c.real_path = in_use_real;
    c.bind_mounted = mounted(c);
    c.in_use = true;
    out.push_back(std::move(c));
  }
  return out;
}

DriverBridgeInput read_driver_bridge_input(const std::string& kernel_version_path, const std::string& mountinfo_path,
                                           const std::vector<std::string>& folders, const std::string& in_use) {
  DriverBridgeInput input;
  input.kernel_version_source = kernel_version_path;
  if (auto v = read_regular(kernel_version_path, kKernelVersionFileLimit)) input.kernel_version_text = std::move(v).value();
  std::vector<std::string> mounts;
  bool truncated = false;
  if (auto m = read_regular(mountinfo_path, kMountinfoLimit, &truncated)) mounts = mount_points(m.value());
  input.libcuda = find_libcuda_copies(folders, in_use, mounts);
  return input;
}

std::optional<std::string> read_small_text(const std::string& path) {
  auto r = read_regular(path, 1u << 20);
  if (!r) return std::nullopt;
  return std::move(r).value();
}

}  // namespace cudashim::symbols
