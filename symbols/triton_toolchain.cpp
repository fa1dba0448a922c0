#include "symbols/triton_toolchain.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <regex>

#include "symbols/bounded_read.h"

namespace cudashim::symbols {
namespace fs = std::filesystem;
namespace {

// The CUDA releases whose ptxas targets each SM. First release: the PTX ISA notes of each
// target ("Requires sm_100 or higher ... introduced in PTX ISA 8.6") with the PTX ISA release
// history (PTX 7.8 = CUDA 11.8, 8.0 = 12.0, 8.6/8.7 = 12.7/12.8, 8.8 = 12.9, 9.0 = 13.0),
// https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes-ptx-release-history,
// cross-checked with LLVM's llvm/lib/Target/NVPTX/NVPTX.td (sm_100/101/120 first public in
// the 12.8 toolkit; CUDA 12.7 was never released). Last release: CUDA 12.0 dropped sm_35/37;
// CUDA 13.0 dropped offline compilation for Maxwell, Pascal and Volta (sm_50..sm_72) and
// renamed Thor's sm_101 to sm_110 (CUDA 13.0 release notes, "Deprecated Architectures").
struct SmRow {
  int sm;
  int first;  // 1000*major + 10*minor
  int last;   // 0: still supported
};
constexpr SmRow kSmRows[] = {
    {35, 5000, 11080}, {37, 6050, 11080}, {50, 6000, 12090}, {52, 6050, 12090}, {53, 7000, 12090},
    {60, 8000, 12090}, {61, 8000, 12090}, {62, 8000, 12090}, {70, 9000, 12090}, {72, 9010, 12090},
    {75, 10000, 0},    {80, 11000, 0},    {86, 11010, 0},    {87, 11040, 0},    {88, 13000, 0},
    {89, 11080, 0},    {90, 11080, 0},    {100, 12080, 0},   {101, 12080, 12090}, {103, 12090, 0},
    {110, 13000, 0},   {120, 12080, 0},   {121, 12090, 0},
};
constexpr int kSm90aFirst = 12000;  // sm_90a: PTX ISA 8.0, CUDA 12.0

std::string release_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

// Why Triton would skip the tool at `path` (it runs `path --version` and moves on when that
// fails); "" when it looks usable.
std::string tool_problem(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "no such file";
  if (S_ISDIR(st.st_mode)) return "a folder, not the tool itself";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (access(path.c_str(), X_OK) != 0) return "not executable";
  return "";
}

// libcuda, the way Triton's libcuda_dirs() looks for it: TRITON_LIBCUDA_PATH, else the
// ldconfig cache's libcuda.so.1 lines, else the LD_LIBRARY_PATH folders that hold one.
void find_libcuda(const TritonInput& in, TritonToolchain& tc) {
  auto exists = [&](const std::string& p) { return in.file_exists && in.file_exists(p); };
  const std::string soname = "libcuda.so.1";
  if (in.libcuda_path_env && !in.libcuda_path_env->empty()) {
    const std::string& dir = *in.libcuda_path_env;
    tc.libcuda_dirs = {dir};
    tc.libcuda_how = "TRITON_LIBCUDA_PATH";
    if (!exists(join(dir, soname)))
      tc.libcuda_env_problem = exists(dir) && dir.find("libcuda.so") != std::string::npos
                                   ? " names the file: Triton wants the folder that holds libcuda.so.1 (here " + dir_of(dir) + ")"
                                   : " holds no libcuda.so.1: Triton links its launcher against that folder";
    return;
  }
  tc.libcuda_tried.push_back("TRITON_LIBCUDA_PATH: not set");
  if (!in.ldconfig_present) {
    tc.libcuda_how = "none";
    tc.libcuda_failure = "/sbin/ldconfig is missing and TRITON_LIBCUDA_PATH is not set: Triton cannot look for libcuda";
    tc.libcuda_tried.push_back("/sbin/ldconfig: no such file");
    return;
  }
  for (const auto& p : in.cache_libcuda_paths) {
    const std::string d = dir_of(p);
    if (std::find(tc.libcuda_dirs.begin(), tc.libcuda_dirs.end(), d) == tc.libcuda_dirs.end()) tc.libcuda_dirs.push_back(d);
  }
  tc.libcuda_how = "ldconfig cache";
  tc.libcuda_tried.push_back("ldconfig -p: " + (in.cache_libcuda_paths.empty() ? std::string("no libcuda.so.1 line")
                                                                               : std::to_string(in.cache_libcuda_paths.size()) + " libcuda.so.1 lines"));
  if (tc.libcuda_dirs.empty() && !in.ld_library_path.empty()) {
    tc.libcuda_how = "LD_LIBRARY_PATH";
    std::size_t start = 0;
    while (start <= in.ld_library_path.size()) {
      std::size_t end = in.ld_library_path.find(':', start);
      if (end == std::string::npos) end = in.ld_library_path.size();
      const std::string d = in.ld_library_path.substr(start, end - start);
      if (!d.empty() && exists(join(d, soname))) tc.libcuda_dirs.push_back(d);
      tc.libcuda_tried.push_back("LD_LIBRARY_PATH " + (d.empty() ? std::string("(empty)") : d) + ": " +
                                 (!d.empty() && exists(join(d, soname)) ? "has" : "no") + " libcuda.so.1");
      start = end + 1;
    }
  }
  bool any = false;
  for (const auto& d : tc.libcuda_dirs) any = any || exists(join(d, soname));
  if (!any) {
    tc.libcuda_how = "none";
    tc.libcuda_failure = "Triton's search for libcuda.so.1 finds nothing (its assert \"libcuda.so cannot found!\")";
  }
}

// The launcher is linked with -L<dirs> and -l:libcuda.so.1 (or -lcuda: an unversioned libcuda.so).
void check_launcher_link(const TritonInput& in, TritonToolchain& tc) {
  if (!tc.libcuda_failure.empty() || !in.links_libcuda_soname.has_value()) return;
  auto exists = [&](const std::string& p) { return in.file_exists && in.file_exists(p); };
  const std::string needed = *in.links_libcuda_soname ? "libcuda.so.1" : "libcuda.so";
  const char* flag = *in.links_libcuda_soname ? "-l:libcuda.so.1" : "-lcuda";
  bool linkable = false;
  for (const auto& d : tc.libcuda_dirs) linkable = linkable || exists(join(d, needed));
  for (const auto& d : in.linker_dirs) linkable = linkable || exists(join(d, needed));
  if (linkable) return;
  tc.libcuda_failure = std::string("Triton's launcher links with ") + flag + " but no " + needed +
                       " is in its folders or the linker's (\"cannot find " + flag + "\")";
  for (const auto& d : tc.libcuda_dirs) tc.libcuda_tried.push_back("-L" + d + ": no " + needed);
}

}  // namespace

std::optional<ToolVersion> parse_tool_version(std::string_view bytes) {
  static constexpr std::string_view kBanner = "Cuda compilation tools, release ";
  std::size_t at = 0;
  while ((at = bytes.find(kBanner, at)) != std::string_view::npos) {
    const std::size_t start = at;
    at += kBanner.size();
    // "12.8, V12.8.93" (the binary also holds a "release %d.%d" format string: skipped)
    std::size_t end = at;
    while (end < bytes.size() && end - at < 40 && bytes[end] != '\n' && bytes[end] != '\0' && bytes[end] != ' ') ++end;
    int major = 0, minor = 0;
    char comma = 0;
    const std::string release(bytes.substr(at, end - at));
    if (std::sscanf(release.c_str(), "%d.%d%c", &major, &minor, &comma) != 3 || comma != ',' || major <= 0 || major > 99)
      continue;
    std::size_t vend = end;
    while (vend < bytes.size() && vend - end < 24 && bytes[vend] != '\n' && bytes[vend] != '\0' && bytes[vend] != '\r') ++vend;
    std::string rest(bytes.substr(end, vend - end));  // " V12.8.93" (and more on some tools)
    ToolVersion v;
    v.major = major;
    v.minor = minor;
    const auto vpos = rest.find(" V");
    if (vpos != std::string::npos) {
      std::size_t k = vpos + 2;
      while (k < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[k])) || rest[k] == '.')) v.full += rest[k++];
    }
    if (v.full.empty()) v.full = std::to_string(major) + "." + std::to_string(minor);
    v.text = std::string(bytes.substr(start, end - start)) + " V" + v.full;
    return v;
  }
  return std::nullopt;
}

std::optional<ToolVersion> read_tool_version(const std::string& path) {
  const OpenedFile opened = open_regular(path.c_str());  // never a FIFO or a device (bounded_read.h)
  if (opened.fd < 0) return std::nullopt;
  const int fd = opened.fd;
  if (opened.size == 0) {
    close(fd);
    return std::nullopt;
  }
  const std::size_t size = static_cast<std::size_t>(opened.size);
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return std::nullopt;
  auto v = parse_tool_version(std::string_view(static_cast<const char*>(map), size));
  munmap(map, size);
  return v;
}

PtxasTarget ptxas_target(int major, int minor, int sm, bool arch_specific) {
  PtxasTarget t;
  const SmRow* row = nullptr;
  for (const auto& r : kSmRows)
    if (r.sm == sm) row = &r;
  if (row == nullptr || major <= 0) return t;  // an SM (or a release) the table does not know
  const int release = 1000 * major + 10 * minor;
  const int first = arch_specific && sm == 90 ? kSm90aFirst : row->first;
  t.first = release_text(first);
  t.last = row->last != 0 ? release_text(row->last) : "";
  t.support = release < first ? SmSupport::too_old : row->last != 0 && release > row->last ? SmSupport::dropped : SmSupport::yes;
  return t;
}

TritonToolchain triton_toolchain(const TritonInput& in) {
  TritonToolchain tc;
  auto find_tool = [&](const std::string& name) -> const TritonTool* {
    for (const auto& t : in.tools)
      if (t.name == name) return &t;
    return nullptr;
  };
  // The ptxas Triton runs for this GPU: ptxas-blackwell (when the package has it) from sm_100 on.
  const TritonTool* tool = find_tool("ptxas");
  if (const TritonTool* bw = find_tool("ptxas-blackwell");
      bw != nullptr && in.sm >= 100 && (!bw->bundled.empty() || !bw->override_path.empty()))
    tool = bw;
  if (tool != nullptr) {
    tc.ptxas = tool;
    if (!tool->override_path.empty() && tool->override_problem.empty()) {
      tc.ptxas_path = tool->override_path;
      tc.ptxas_version = tool->override_version;
    } else if (!tool->bundled.empty()) {
      tc.ptxas_path = tool->bundled;
      tc.ptxas_version = tool->bundled_version;
    }
  }
  tc.ptxas_var = tool != nullptr ? tool->env_var : "TRITON_PTXAS_PATH";
  find_libcuda(in, tc);
  check_launcher_link(in, tc);
  return tc;
}

std::optional<std::string> find_triton_package(const std::string& dir) {
  std::error_code ec;
  for (const fs::path& p : {fs::path(dir), fs::path(dir) / "triton"})
    if (fs::is_directory(p / "backends" / "nvidia", ec) && p.filename() == "triton") return p.string();
  return std::nullopt;
}

TritonInput read_triton_input(const std::string& package_dir, int sm, const std::function<const char*(const char*)>& getenv,
                              const LdCache* cache, const std::string& ld_library_path,
                              const std::vector<std::string>& linker_dirs, bool driver_found) {
  TritonInput in;
  in.package_dir = package_dir;
  in.sm = sm;
  const fs::path pkg(package_dir);
  std::error_code ec;
  // The version: the dist-info next to the package, else __version__ in __init__.py.
  for (fs::directory_iterator it(pkg.parent_path(), fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (n.rfind("triton-", 0) == 0 && n.size() > 17 && n.compare(n.size() - 10, 10, ".dist-info") == 0) {
      in.version = n.substr(7, n.size() - 17);
      break;
    }
  }
  auto read_small = [](const fs::path& p) {
    bool truncated = false;  // Python sources: what the first MiB says is enough
    auto r = read_regular(p.string(), 1u << 20, &truncated);
    return r ? std::move(r).value() : std::string();
  };
  if (in.version.empty()) {
    std::smatch m;
    const std::string init = read_small(pkg / "__init__.py");
    if (std::regex_search(init, m, std::regex(R"(__version__\s*=\s*['"]([^'"]+)['"])"))) in.version = m[1];
  }
  // How the launcher links libcuda (third_party/nvidia/backend/driver.py: `libraries = [...]`).
  {
    std::smatch m;
    const std::string driver = read_small(pkg / "backends" / "nvidia" / "driver.py");
    if (std::regex_search(driver, m, std::regex(R"(\nlibraries\s*=\s*\[([^\]]*)\])"))) {
      const std::string libs = m[1];
      if (libs.find("libcuda.so.1") != std::string::npos) in.links_libcuda_soname = true;
      else if (std::regex_search(libs, std::regex(R"(['"]cuda['"])"))) in.links_libcuda_soname = false;
    }
  }
  for (const char* name : {"ptxas", "ptxas-blackwell", "cuobjdump", "nvdisasm"}) {
    TritonTool t;
    t.name = name;
    std::string upper;
    for (const char* c = name; *c; ++c) upper += *c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    t.env_var = "TRITON_" + upper + "_PATH";
    const fs::path bundled = pkg / "backends" / "nvidia" / "bin" / name;
    if (tool_problem(bundled.string()).empty()) {
      t.bundled = bundled.string();
      t.bundled_version = read_tool_version(t.bundled);
    }
    if (const char* v = getenv(t.env_var.c_str()); v != nullptr && *v != '\0') {
      t.override_path = v;
      t.override_problem = tool_problem(t.override_path);
      if (t.override_problem.empty()) t.override_version = read_tool_version(t.override_path);  // a wrapper script: unknown
    }
    if (t.name == "ptxas-blackwell" && t.bundled.empty() && t.override_path.empty()) continue;  // older Triton: no such tool
    in.tools.push_back(std::move(t));
  }
  if (const char* v = getenv("TRITON_LIBCUDA_PATH")) in.libcuda_path_env = std::string(v);
  struct stat st {};
  in.ldconfig_present = stat("/sbin/ldconfig", &st) == 0;
  if (cache != nullptr)
    for (const auto& e : cache->entries)
      if (e.soname == "libcuda.so.1" || e.path.find("libcuda.so.1") != std::string::npos) in.cache_libcuda_paths.push_back(e.path);
  in.ld_library_path = ld_library_path;
  in.linker_dirs = linker_dirs;
  in.driver_found = driver_found;
  in.file_exists = [](const std::string& p) {
    struct stat s {};
    return stat(p.c_str(), &s) == 0 && S_ISREG(s.st_mode);
  };
  return in;
}

}  // namespace cudashim::symbols
