// doctor's checks: which files to look at, what each one is, and the findings.
#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "policy/rules/doctor.h"
#include "policy/rules/driver.h"
#include "policy/rules/fatbin.h"
#include "policy/rules/libraries.h"
#include "policy/rules/library_search.h"
#include "policy/rules/toolchain.h"
#include "policy/rules/version_shortfalls.h"
#include "symbols/bounded_read.h"
#include "symbols/resolution_text.h"
#include "symbols/version_check.h"
#include "tools/doctor.h"

namespace cudashim::tools {
namespace fs = std::filesystem;
using namespace cudashim::symbols;

namespace {

constexpr std::size_t kMaxWalkEntries = 500000;  // folder entries visited in one scan
constexpr std::size_t kMaxElfFiles = 50000;

// Whether `p` is a regular file that starts like ELF. Never opens a FIFO or a device (bounded_read.h).
bool has_elf_magic(const fs::path& p) {
  const OpenedFile f = open_regular(p.c_str());
  if (f.fd < 0) return false;
  char magic[4] = {};
  const bool elf = pread(f.fd, magic, 4, 0) == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
  close(f.fd);
  return elf;
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// A folder of a Python environment: holds nvidia/ (CUDA wheels) or torch/lib.
bool looks_like_site_packages(const fs::path& dir) { return is_dir(dir / "nvidia") || is_dir(dir / "torch" / "lib"); }

// Candidate file names in a folder walk: shared objects and executables.
bool worth_reading(const fs::directory_entry& e) {
  std::error_code ec;
  if (!e.is_regular_file(ec)) return false;
  const std::string name = e.path().filename().string();
  if (name.find(".so") != std::string::npos) return true;
  auto perms = e.status(ec).permissions();
  return !ec && (perms & fs::perms::owner_exec) != fs::perms::none;
}

void walk(const fs::path& dir, std::vector<fs::path>& out, std::size_t& visited, std::vector<std::string>& problems) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) {
    problems.push_back(dir.string() + ": cannot read folder (" + ec.message() + ")");
    return;
  }
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    if (++visited > kMaxWalkEntries) {
      problems.push_back(dir.string() + ": more than " + std::to_string(kMaxWalkEntries) + " entries, the rest is skipped");
      return;
    }
    if (worth_reading(*it) && has_elf_magic(it->path())) out.push_back(it->path());
    if (out.size() >= kMaxElfFiles) return;
  }
}

// Of several names of one file, the one a loader would ask for: "libx.so.12" over
// "libx.so" and "libx.so.12.1.0" (one version component), else the shortest.
bool better_alias(const fs::path& a, const fs::path& b) {
  auto rank = [](const fs::path& p) {
    const std::string n = p.filename().string();
    const std::size_t so = n.find(".so.");
    const bool one_component = so != std::string::npos && n.find('.', so + 4) == std::string::npos;
    return std::make_pair(one_component ? 0 : 1, n.size());
  };
  return rank(a) < rank(b) || (rank(a) == rank(b) && a.string() < b.string());
}

// The RECORD files of the wheels installed in one folder, read once per scan.
class WheelRecords {
 public:
  // The distribution that lists `path` in its RECORD ("nvidia_cusparse_cu12", "12.2.0.103").
  std::optional<std::pair<std::string, std::string>> owner_of(const fs::path& path) {
    fs::path dir = path.parent_path();
    for (int up = 0; up < 8 && !dir.empty(); ++up) {
      for (const auto& wheel : wheels_in(dir)) {
        const std::string rel = path.lexically_relative(dir).generic_string();
        if (wheel.files.count(rel) != 0) return std::make_pair(wheel.name, wheel.version);
      }
      if (dir == dir.root_path()) break;
      dir = dir.parent_path();
    }
    return std::nullopt;
  }

 private:
  struct Wheel {
    std::string name, version;
    std::unordered_set<std::string> files;
  };
  const std::vector<Wheel>& wheels_in(const fs::path& dir) {
    auto it = cache_.find(dir.string());
    if (it != cache_.end()) return it->second;
    std::vector<Wheel> wheels;
    std::error_code ec;
    fs::directory_iterator di(dir, fs::directory_options::skip_permission_denied, ec), end;
    std::size_t seen = 0;
    for (; !ec && di != end && ++seen < 20000; di.increment(ec)) {
      const std::string n = di->path().filename().string();
      const std::string suffix = ".dist-info";
      if (n.size() <= suffix.size() || n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      const std::string stem = n.substr(0, n.size() - suffix.size());
      const std::size_t dash = stem.find('-');
      if (dash == std::string::npos) continue;
      std::ifstream record(di->path() / "RECORD");
      if (!record) continue;
      Wheel w{stem.substr(0, dash), stem.substr(dash + 1), {}};
      std::string line;
      while (std::getline(record, line) && w.files.size() < 200000) w.files.insert(line.substr(0, line.find(',')));
      wheels.push_back(std::move(w));
    }
    return cache_.emplace(dir.string(), std::move(wheels)).first->second;
  }
  std::unordered_map<std::string, std::vector<Wheel>> cache_;
};

LibraryVersion version_with(const std::string& path, const std::string& real_path, const CudaLibraryName& name,
                            const ElfFacts& facts, WheelRecords& wheels) {
  if (auto real = classify_cuda_library(fs::path(real_path).filename().string());
      real && real->version.find('.') != std::string::npos)
    return {real->version, "file name"};
  // Only an NVIDIA wheel's version is the library's: a copy bundled in another package (Triton's
  // cupti) carries that package's version, which says nothing of the CUDA inside.
  for (const auto& p : {fs::absolute(path).lexically_normal(), fs::path(real_path)}) {
    if (auto owner = wheels.owner_of(p); owner && owner->first.rfind("nvidia_", 0) == 0)
      return {owner->second, "wheel RECORD (" + owner->first + ")"};
  }
  if (name.family == "nvJitLink") {
    if (auto level = nvjitlink_max_level(facts))
      return {std::to_string(level->major) + "." + std::to_string(level->minor), "nvJitLink API level of its symbols"};
  }
  if (name.major >= 0) return {std::to_string(name.major), "soname (major only)"};
  return {"", "unknown"};
}

// Whether `path` lies inside NVIDIA's or a framework's own package of a Python environment
// (nvidia, torch, triton, jaxlib, jax_plugins, cupy, ... right below a folder named site-packages
// or dist-packages, or below one of `site_roots`, the scanned folders that look like one): files
// the user installs with pip but cannot change.
// The vendor package (NVIDIA's wheels, torch, triton, jax, cupy, tensorrt) a file lies in under
// site-packages, or "" when it lies in none of them.
std::string vendor_package_of(const std::string& path, const std::vector<fs::path>& site_roots) {
  static constexpr const char* kPackages[] = {"nvidia", "torch", "triton", "jaxlib", "jax_plugins", "jax", "cupy", "cupy_backends",
                                              "tensorrt", "tensorrt_libs"};
  auto vendor = [](const std::string& name) {
    for (const char* pkg : kPackages)
      if (name == pkg || name.rfind(std::string(pkg) + "_", 0) == 0) return name;
    return std::string();
  };
  const fs::path p = fs::absolute(path).lexically_normal();
  for (const auto& root : site_roots) {
    const fs::path rel = p.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != ".." && *rel.begin() != ".") return vendor(rel.begin()->string());
  }
  bool after_site = false;
  for (const auto& part : p) {
    const std::string name = part.string();
    if (after_site) return vendor(name);
    after_site = name == "site-packages" || name == "dist-packages";
  }
  return {};
}

bool in_vendor_package(const std::string& path, const std::vector<fs::path>& site_roots) {
  return !vendor_package_of(path, site_roots).empty();
}

// A copy a framework bundles inside its own package (Triton's cupti, torch/lib): not one of
// NVIDIA's wheels, which every framework of the environment may load.
bool bundled_by_framework(const std::string& path, const std::vector<fs::path>& site_roots) {
  const std::string pkg = vendor_package_of(path, site_roots);
  return !pkg.empty() && pkg != "nvidia" && pkg.rfind("nvidia_", 0) != 0;
}

// The C library's own files: glibc provides them wherever anything runs, so doctor does not
// search for them (a search environment without default folders would report them all).
bool is_libc_part(const std::string& name) {
  static constexpr const char* kNames[] = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
                                           "libutil.so.1", "libresolv.so.2", "libmvec.so.1"};
  for (const char* n : kNames)
    if (name == n) return true;
  return name.rfind("ld-linux", 0) == 0;
}

// Size and a 64-bit FNV-1a hash of the whole file: what makes two copies "the same file".
std::optional<std::pair<std::uint64_t, std::uint64_t>> content_identity(const std::string& path) {
  const OpenedFile f = open_regular(path.c_str());
  if (f.fd < 0) return std::nullopt;
  std::uint64_t hash = 1469598103934665603ull, size = 0;
  std::vector<unsigned char> buf(1 << 20);
  for (;;) {
    const ssize_t got = read(f.fd, buf.data(), buf.size());
    if (got < 0) {
      close(f.fd);
      return std::nullopt;
    }
    if (got == 0) break;
    for (ssize_t i = 0; i < got; ++i) hash = (hash ^ buf[static_cast<std::size_t>(i)]) * 1099511628211ull;
    size += static_cast<std::uint64_t>(got);
  }
  close(f.fd);
  return std::make_pair(size, hash);
}

}  // namespace

int DoctorReport::exit_code() const {
  int code = 0;
  for (const auto& f : findings) {
    if (f.severity() == Severity::error) return 4;  // errors: distinct from 2, a usage error (tools/cli_spec.h kExitStatuses)
    if (f.severity() == Severity::warning) code = 1;
  }
  return code;
}

std::vector<std::string> collect_elf_files(const std::vector<std::string>& paths, std::vector<std::string>& problems) {
  std::vector<fs::path> found;
  std::size_t visited = 0;
  for (const auto& arg : paths) {
    fs::path p(arg);
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
      problems.push_back(arg + ": no such file or folder");
    } else if (fs::is_directory(st)) {
      if (looks_like_site_packages(p)) {
        if (is_dir(p / "torch" / "lib")) walk(p / "torch" / "lib", found, visited, problems);
        if (is_dir(p / "triton" / "backends" / "nvidia" / "lib")) walk(p / "triton" / "backends" / "nvidia" / "lib", found, visited, problems);
        fs::directory_iterator di(p / "nvidia", fs::directory_options::skip_permission_denied, ec), end;
        std::vector<fs::path> wheel_dirs;
        for (std::size_t n = 0; !ec && di != end && n < 10000; di.increment(ec), ++n)
          if (is_dir(di->path() / "lib")) wheel_dirs.push_back(di->path() / "lib");
        std::sort(wheel_dirs.begin(), wheel_dirs.end());
        for (const auto& d : wheel_dirs) walk(d, found, visited, problems);
      } else {
        walk(p, found, visited, problems);
      }
    } else if (!fs::is_regular_file(st)) {
      problems.push_back(arg + ": not a regular file (a FIFO or a device is never opened)");
    } else if (!has_elf_magic(p)) {
      problems.push_back(arg + ": not an ELF file");
    } else {
      found.push_back(p);
    }
  }
  std::map<std::string, fs::path> by_real;  // real path -> best alias
  for (const auto& p : found) {
    std::error_code ec;
    std::string real = fs::canonical(p, ec).string();
    if (ec) real = p.string();
    auto it = by_real.find(real);
    if (it == by_real.end())
      by_real.emplace(real, p);
    else if (better_alias(p, it->second))
      it->second = p;
  }
  std::vector<std::string> out;
  for (const auto& [real, alias] : by_real) out.push_back(alias.string());
  std::sort(out.begin(), out.end());
  return out;
}

LibraryVersion library_version(const std::string& path, const std::string& real_path, const CudaLibraryName& name,
                               const ElfFacts& facts) {
  WheelRecords wheels;
  return version_with(path, real_path, name, facts, wheels);
}

namespace {

// What one file gives without the loader's view: read on a worker thread.
struct FileWork {
  FactsCacheEntry elf;
  std::optional<Fatbin> fatbin;  // set when the file has fatbin entries
  std::string fatbin_error;
};

// Runs work(i) for i in [0, n) on up to `jobs` threads (0: one per core, at most 16).
void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& work) {
  std::size_t threads = jobs > 0 ? static_cast<std::size_t>(jobs) : std::min<std::size_t>(16, std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, n);
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) work(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < n; i = next++) work(i);
    });
  for (auto& th : pool) th.join();
}

}  // namespace

namespace {

// What diagnose's steps share: the inputs, the report they fill and the facts one step leaves
// for the next.
struct Scan {
  const std::vector<std::string>& paths;
  int sm;
  const SearchEnv& env;
  const HostFacts& host;
  DoctorReport& report;
  std::vector<FrameworkInfo> frameworks;
  std::vector<fs::path> site_roots;  // the scanned folders that look like a site-packages
  // Every unresolved DT_NEEDED of the scanned files, by name: who needs it and how it was searched.
  std::map<std::string, std::pair<std::vector<std::string>, Resolution>> missing;
  std::vector<std::shared_ptr<const ElfFacts>> facts_of;  // parallel to report.libraries
  FactsCache cache;
  WheelRecords wheels;
  Resolution driver;  // libcuda.so.1 as any process of this environment would find it

  std::vector<DoctorFinding>& findings() { return report.findings; }
  void add(std::vector<Finding> found) {
    for (auto& f : found) report.findings.push_back(std::move(f));
  }
  void note_missing(const std::string& name, const Resolution& r, const std::string& needer) {
    auto& entry = missing[name];
    if (entry.first.empty()) entry.second = r;
    entry.first.push_back(needer);
  }
};

// The per-file reading (ELF facts, the fatbins: most of the bytes) on worker threads; the
// results land in file order, so the report does not depend on the scheduling.
std::vector<FileWork> read_files(const std::vector<std::string>& files, int jobs, const DoctorProgress& progress) {
  std::vector<FileWork> work(files.size());
  std::mutex progress_lock;
  std::size_t started = 0;
  parallel_for(files.size(), jobs, [&](std::size_t i) {
    if (progress) {
      std::lock_guard<std::mutex> hold(progress_lock);
      progress(started++, files.size(), files[i]);
    }
    FileWork& w = work[i];
    w.elf = read_elf_cached(files[i], nullptr);
    if (!w.elf.facts) return;
    auto fb = read_fatbin(files[i], *w.elf.facts);
    if (!fb.ok())
      w.fatbin_error = fb.error();
    else if (!fb.value().entries.empty())
      w.fatbin = std::move(fb).value();
  });
  return work;
}

// The loader's view from `path`: its whole tree, as if it were loaded first: what it needs and
// cannot find, the stub driver, versioned-symbol shortfalls, and the libraries it would load
// together (one process).
void examine_tree(Scan& scan, const std::string& path, LibraryReport& lib) {
  auto tree = resolve_tree(path, scan.env, &scan.cache);
  if (!tree.ok()) return;
  const LoadTree& t = tree.value();
  for (const Resolution& r : t.objects[0].needed) {
    auto needed = classify_cuda_library(r.name);
    if (!needed) {
      if (!r.found() && !is_libc_part(r.name)) scan.note_missing(r.name, r, path);
      continue;
    }
    lib.cuda_needed.push_back(r);
    if (needed->family == "cuda") {
      if (auto f = policy::stub_needed(path, r)) scan.findings().push_back(std::move(*f));
      continue;  // a missing driver is reported once, by examine_driver
    }
    if (!r.found()) scan.note_missing(r.name, r, path);
  }
  policy::add_version_shortfall_findings(check_versions_in_tree(t, 0), scan.findings());
  std::vector<policy::LibraryCopy> loaded;
  for (const auto& obj : t.objects) {
    if (!obj.facts) continue;
    auto n = classify_cuda_library(obj.facts->soname.empty() ? obj.name : obj.facts->soname);
    if (n && n->major >= 0)
      loaded.push_back({obj.resolution.path, obj.resolution.path, n->family, n->stem, n->major,
                        n->family + " " + std::to_string(n->major) + ": " + obj.resolution.path});
  }
  scan.add(policy::library_copy_findings(loaded, {policy::CopiesSeen::in_process, path}));
}

// The file's fatbin: coverage for the GPU, the architectures it carries, its size.
void examine_fatbin(Scan& scan, FileWork& work, LibraryReport& lib) {
  if (!work.fatbin) {
    if (!work.fatbin_error.empty()) scan.findings().push_back(policy::unreadable_file(lib.path, work.fatbin_error));
    return;
  }
  const Fatbin& fatbin = *work.fatbin;
  lib.coverage = coverage_for(fatbin, scan.sm, FatbinSource::registered);
  if (fatbin.embedded_containers > 0) lib.embedded_coverage = coverage_for(fatbin, scan.sm, FatbinSource::embedded);
  lib.fatbin_entries = fatbin.entries.size();
  std::map<std::pair<bool, std::string>, int> counts;
  for (const auto& e : fatbin.entries) ++counts[{e.embedded, e.arch_name()}];
  std::vector<std::pair<std::pair<bool, std::string>, int>> ordered(counts.begin(), counts.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return a.first.first != b.first.first ? !a.first.first : arch_less(a.first.second, b.first.second);
  });
  for (const auto& [key, n] : ordered)
    lib.fatbin_arch_counts.push_back((key.first ? "embedded " : "") + key.second + " " + std::to_string(n));
  lib.fatbin_embedded_containers = fatbin.embedded_containers;
  lib.fatbin_bytes = fatbin_bytes(fatbin, scan.sm);
  lib.fatbin_registered_bytes = fatbin_bytes(fatbin, scan.sm, FatbinSource::registered);
  policy::add_fatbin_coverage_findings(lib.path, lib.coverage, lib.embedded_coverage, scan.findings());
  policy::add_fatbin_size_finding(lib.path, lib.fatbin_bytes, scan.findings());
  work.fatbin.reset();  // the entries are not needed any more
}

// One row of the report per readable file, in file order.
void examine_files(Scan& scan, const std::vector<std::string>& files, std::vector<FileWork>& work) {
  for (std::size_t i = 0; i < files.size(); ++i) scan.cache.emplace(files[i], work[i].elf);
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    const FactsCacheEntry& entry = work[i].elf;
    if (!entry.facts) {
      scan.findings().push_back(policy::unreadable_file(path, entry.error));
      continue;
    }
    const ElfFacts& facts = *entry.facts;
    LibraryReport lib;
    lib.path = path;
    std::error_code ec;
    lib.real_path = fs::canonical(path, ec).string();
    if (ec) lib.real_path = path;
    lib.soname = facts.soname;
    lib.cuda = classify_cuda_library(facts.soname);
    if (!lib.cuda) lib.cuda = classify_cuda_library(fs::path(path).filename().string());
    if (lib.cuda) lib.version = version_with(path, lib.real_path, *lib.cuda, facts, scan.wheels);
    examine_tree(scan, path, lib);
    examine_fatbin(scan, work[i], lib);
    scan.report.libraries.push_back(std::move(lib));
    scan.facts_of.push_back(entry.facts);
  }
}

// Byte-identical copies (same size and content) are one library: one row, its paths listed.
// Wheels hold no symlinks: libcupti.so, libcupti.so.12 and libcupti.so.2025.1.1 of one wheel are
// three equal files. Only files of equal size are hashed. Returns the rows merged away.
std::vector<bool> find_identical_copies(std::vector<LibraryReport>& libraries) {
  std::map<std::uintmax_t, std::vector<std::size_t>> by_size;
  for (std::size_t i = 0; i < libraries.size(); ++i) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(libraries[i].real_path, ec);
    if (!ec) by_size[size].push_back(i);
  }
  std::vector<bool> merged(libraries.size(), false);
  for (auto& [size, items] : by_size) {
    if (items.size() < 2) continue;
    // The row keeps the name a loader asks for (libx.so.12 over libx.so and libx.so.12.1.0).
    std::stable_sort(items.begin(), items.end(),
                     [&](std::size_t a, std::size_t b) { return better_alias(libraries[a].path, libraries[b].path); });
    std::vector<std::optional<std::pair<std::uint64_t, std::uint64_t>>> ids;
    for (auto i : items) ids.push_back(content_identity(libraries[i].real_path));
    for (std::size_t a = 0; a < items.size(); ++a) {
      if (merged[items[a]] || !ids[a]) continue;
      for (std::size_t b = a + 1; b < items.size(); ++b) {
        if (merged[items[b]] || ids[b] != ids[a]) continue;
        merged[items[b]] = true;
        libraries[items[a]].identical_copies.push_back(libraries[items[b]].path);
      }
    }
  }
  return merged;
}

// Drops the rows find_identical_copies merged, and the copies' own fatbin findings (the kept
// row's say the same).
void merge_identical_copies(Scan& scan) {
  std::vector<LibraryReport>& libraries = scan.report.libraries;
  const std::vector<bool> merged = find_identical_copies(libraries);
  std::set<std::string> gone;
  std::vector<LibraryReport> kept;
  std::vector<std::shared_ptr<const ElfFacts>> kept_facts;
  for (std::size_t i = 0; i < libraries.size(); ++i) {
    if (merged[i]) {
      gone.insert(libraries[i].path);
      continue;
    }
    kept.push_back(std::move(libraries[i]));
    kept_facts.push_back(scan.facts_of[i]);
  }
  libraries = std::move(kept);
  scan.facts_of = std::move(kept_facts);
  auto& findings = scan.findings();
  findings.erase(std::remove_if(findings.begin(), findings.end(),
                                [&](const DoctorFinding& f) {
                                  return f.info().domain == FindingDomain::fatbin && gone.count(f.subject) != 0;
                                }),
                 findings.end());
}

// Across the scanned set: copies and majors of each library.
void scanned_set_copies(Scan& scan) {
  std::vector<policy::LibraryCopy> scanned;
  for (const auto& lib : scan.report.libraries) {
    if (!lib.cuda || lib.cuda->major < 0) continue;
    std::string line = lib.path + " (" + (lib.version.version.empty() ? "version unknown" : lib.version.version) + ", " +
                       lib.version.source + ")";
    for (const auto& copy : lib.identical_copies) line += "; identical: " + copy;
    scanned.push_back({lib.path, lib.real_path, lib.cuda->family, lib.cuda->stem, lib.cuda->major, std::move(line),
                       in_vendor_package(lib.path, scan.site_roots), bundled_by_framework(lib.path, scan.site_roots)});
  }
  scan.add(policy::library_copy_findings(scanned, {policy::CopiesSeen::in_scanned_set, ""}));
}

// cuDNN: libcudnn.so.N dlopen()s its sub-libraries by name, through its own RUNPATH.
void cudnn_splits(Scan& scan) {
  for (std::size_t i = 0; i < scan.report.libraries.size(); ++i) {
    const auto& lib = scan.report.libraries[i];
    if (!lib.cuda || lib.cuda->stem != "cudnn" || lib.cuda->major < 0) continue;
    const std::string home = fs::path(lib.real_path).parent_path().string();
    std::vector<std::string> evidence;
    std::vector<policy::CudnnPart> parts;
    for (const auto& sub : cudnn_sublibrary_sonames(lib.cuda->major)) {
      Resolution r = find_library(sub, *scan.facts_of[i], {}, scan.env);
      if (!r.found()) continue;
      std::error_code ec;
      const fs::path real = fs::canonical(r.path, ec);
      const auto name = classify_cuda_library(real.filename().string());
      const std::string version = name ? name->version : "";
      parts.push_back({real.parent_path().string(), version});
      evidence.push_back(sub + " => " + r.path + " [" + reason_text(r) + "]" + (version.empty() ? "" : " " + version));
    }
    const policy::CudnnHome at{home, lib.version.source == "file name" ? lib.version.version : ""};
    if (auto f = policy::scanned_cudnn_split(lib.path, at, parts, std::move(evidence))) scan.findings().push_back(std::move(*f));
  }
}

// The folders where the loader (or a compat setup) could find a libcuda, in search order.
std::vector<std::string> libcuda_folders(const SearchEnv& env, const HostFacts& host) {
  std::vector<std::string> folders;
  auto add = [&](const std::string& d) {
    if (!d.empty() && std::find(folders.begin(), folders.end(), d) == folders.end()) folders.push_back(d);
  };
  for (std::size_t start = 0; start <= env.ld_library_path.size();) {
    std::size_t end = env.ld_library_path.find(':', start);
    if (end == std::string::npos) end = env.ld_library_path.size();
    add(env.ld_library_path.substr(start, end - start));
    start = end + 1;
  }
  if (env.cache)
    for (const auto& e : env.cache->entries)
      if (e.soname.rfind("libcuda.so", 0) == 0) add(fs::path(e.path).parent_path().string());
  for (const auto& d : env.default_dirs) add(d);
  for (const auto& d : host.driver_folders) add(d);
  return folders;
}

// The driver, as any process of this environment would find it (libcuda.so.1 for the runtime,
// the unversioned libcuda.so for Triton), and the driver bridge: the host's kernel module
// against that libcuda, and every libcuda copy where the loader could find one.
void examine_driver(Scan& scan) {
  ElfFacts anyone;
  anyone.path = fs::current_path().string() + "/a.out";
  anyone.elf_class = 64;
#if defined(__aarch64__)
  anyone.machine = EM_AARCH64;
#else
  anyone.machine = EM_X86_64;
#endif
  scan.driver = find_library("libcuda.so.1", anyone, {}, scan.env);
  policy::add_driver_search_findings(scan.driver, find_library("libcuda.so", anyone, {}, scan.env), scan.findings());
  const HostFacts& host = scan.host;
  DriverSummary& summary = scan.report.driver;
  DriverBridgeInput bridge;
  bridge.kernel_version_text = host.kernel_version_text;
  bridge.kernel_version_source = host.kernel_version_source;
  bridge.libcuda = find_libcuda_copies(libcuda_folders(scan.env, host), scan.driver.found() ? scan.driver.path : "",
                                       mount_points(host.mountinfo_text));
  bridge.nvml_driver_version = host.nvml_driver_version;
  bridge.gpu_name = host.gpu_name;
  scan.add(policy::driver_bridge_findings(bridge));
  if (host.kernel_version_text)
    if (auto k = parse_kernel_module_version(*host.kernel_version_text)) {
      summary.kernel_module = k->version.text;
      summary.open_module = k->open;
    }
  for (const auto& c : bridge.libcuda) {
    if (c.in_use) summary.libcuda_in_use = c.real_path;
    auto v = libcuda_file_version(fs::path(c.real_path).filename().string());
    summary.libcuda_copies.push_back(c.path + (c.real_path != c.path ? " -> " + c.real_path : "") + " (" +
                                     (v ? v->text : "version unknown") + ")" + (c.bind_mounted ? " [bind-mounted]" : "") +
                                     (c.in_use ? " [in use]" : ""));
  }
}

// Triton, in any scanned folder that is (or holds) the triton package.
void examine_triton(Scan& scan) {
  std::set<std::string> seen;
  const std::function<const char*(const char*)> no_env = [](const char*) -> const char* { return nullptr; };
  const SearchEnv& env = scan.env;
  for (const auto& p : scan.paths) {
    auto pkg = find_triton_package(p);
    if (!pkg || !seen.insert(fs::weakly_canonical(*pkg).string()).second) continue;
    const TritonInput in = read_triton_input(*pkg, scan.sm, scan.host.getenv ? scan.host.getenv : no_env,
                                             env.cache ? &*env.cache : nullptr, env.ld_library_path, env.default_dirs,
                                             scan.driver.found());
    policy::TritonReport t = policy::triton_findings(in);
    TritonSummary summary;
    summary.package_dir = in.package_dir;
    summary.version = in.version;
    summary.ptxas = t.ptxas_path;
    summary.ptxas_version = t.ptxas_version ? t.ptxas_version->full : "";
    summary.libcuda_dirs = t.libcuda_dirs;
    summary.libcuda_how = t.libcuda_how;
    scan.report.tritons.push_back(std::move(summary));
    scan.add(std::move(t.findings));
  }
}

// The headline: the framework, its CUDA, the driver it needs and the one present.
void decide_headline(Scan& scan) {
  std::vector<ScannedRuntime> runtimes;
  for (const auto& lib : scan.report.libraries)
    if (lib.cuda && lib.cuda->family == "cudart" && !lib.version.version.empty()) runtimes.push_back({lib.path, lib.version.version});
  std::string driver = scan.host.driver_version, source = "--driver-version";
  if (driver.empty() && scan.host.kernel_version_text)
    if (auto k = parse_kernel_module_version(*scan.host.kernel_version_text)) {
      driver = k->version.text;
      source = scan.host.kernel_version_source;
    }
  scan.report.headline = policy::make_headline(std::move(scan.frameworks), runtimes, driver, source);
  scan.add(policy::headline_findings(scan.report.headline));
}

}  // namespace

DoctorReport diagnose(const std::vector<std::string>& paths, int sm, const std::string& sm_source, const SearchEnv& env,
                      const DoctorProgress& progress, const HostFacts& host) {
  DoctorReport report;
  report.sm = sm;
  report.sm_source = sm_source;
  Scan scan{paths, sm, env, host, report, find_frameworks(paths), {}, {}, {}, {}, {}, {}};
  for (const auto& p : paths)
    if (is_dir(p) && looks_like_site_packages(p)) {
      fs::path root = fs::absolute(p).lexically_normal();
      scan.site_roots.push_back(root.filename().empty() ? root.parent_path() : root);  // "sp/" as "sp"
    }
  std::vector<std::string> problems;
  const std::vector<std::string> files = collect_elf_files(paths, problems);
  for (const auto& p : problems) report.findings.push_back(policy::unreadable_file(p.substr(0, p.find(": ")), p));
  std::vector<FileWork> work = read_files(files, host.jobs, progress);
  examine_files(scan, files, work);
  // The libraries the loader cannot find, once each, with the exact requirement a framework pins.
  for (const auto& [name, entry] : scan.missing)
    report.findings.push_back(policy::library_not_found(name, entry.first, entry.second, scan.frameworks));
  merge_identical_copies(scan);
  scanned_set_copies(scan);
  cudnn_splits(scan);
  examine_driver(scan);
  examine_triton(scan);
  decide_headline(scan);
  // What NVIDIA's and the frameworks' own files carry for other GPUs is no one's to fix here.
  policy::mark_vendor_fatbin_findings(report.findings,
                                      [&](const std::string& path) { return in_vendor_package(path, scan.site_roots); });
  if (sm_source == "assumed") report.findings.push_back(policy::sm_assumed(sm));
  std::stable_sort(report.findings.begin(), report.findings.end(), [](const DoctorFinding& a, const DoctorFinding& b) {
    return static_cast<int>(a.severity()) > static_cast<int>(b.severity());
  });
  return report;
}

}  // namespace cudashim::tools
