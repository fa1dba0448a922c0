// policy/rules/libraries.cpp: see libraries.h.
#include "policy/rules/libraries.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "policy/user_frame.h"
#include "symbols/cuda_library.h"
#include "symbols/path_names.h"

namespace cudashim::policy {
namespace {

std::string cuda_text(int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

// "12.9" / "12.9.79" -> 12090; 0 when it does not parse.
int version_number(const std::string& v) {
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) < 1 || major <= 0 || major > 99) return 0;
  return major * 1000 + minor * 10;
}

std::string mib(uint64_t b) {
  if (b < (1u << 20)) return fmt::format("{} bytes", b);
  return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
}

void driver_rules(const RuleInputs& in, std::vector<Finding>& out) {
  if (in.driver_version <= 0 || in.libraries == nullptr) return;
  const int drv_major = in.driver_version / 1000, drv_minor = in.driver_version % 1000 / 10;
  for (const auto& lib : *in.libraries) {
    if (lib.family != "cudart") continue;
    const int rt = version_number(lib.version);
    if (rt <= 0) continue;
    const int rt_major = rt / 1000, rt_minor = rt % 1000 / 10;
    const std::string what = lib.linkage == "static" ? "the CUDA runtime linked into " + lib.path : lib.real;
    if (rt_major > drv_major) {
      out.push_back({FindingId::driver_too_old, lib.path,
                     fmt::format("{} is CUDA {}; the driver supports CUDA {} (cuDriverGetVersion {}): a runtime of a newer "
                                 "major does not run on it",
                                 what, cuda_text(rt), cuda_text(in.driver_version), in.driver_version),
                     {fmt::format("runtime: {} ({}, {})", cuda_text(rt), lib.version_source, lib.real),
                      fmt::format("driver: CUDA {} (cuDriverGetVersion = {})", cuda_text(in.driver_version), in.driver_version)}});
    } else if (rt_major == drv_major && rt_minor > drv_minor) {
      out.push_back({FindingId::driver_minor_compat, lib.path,
                     fmt::format("{} is CUDA {}, newer than the driver's CUDA {}: minor-version compatibility applies",
                                 what, cuda_text(rt), cuda_text(in.driver_version)),
                     {fmt::format("runtime: {} ({}, {})", cuda_text(rt), lib.version_source, lib.real),
                      fmt::format("driver: CUDA {} (cuDriverGetVersion = {})", cuda_text(in.driver_version), in.driver_version)}});
    }
  }
}

// The folder the driver's JIT cache uses, and whether it can be written (the folder,
// or the nearest existing parent when it does not exist yet: the driver creates it).
std::string cache_folder(const RuleInputs& in) {
  if (in.cache_path != nullptr && *in.cache_path != '\0') return in.cache_path;
  if (in.home != nullptr && *in.home != '\0') return std::string(in.home) + "/.nv/ComputeCache";
  return "";
}
bool writable_or_creatable(std::string dir) {
  while (!dir.empty()) {
    struct stat st {};
    if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode) && access(dir.c_str(), W_OK | X_OK) == 0;
    const size_t slash = dir.rfind('/');
    if (slash == std::string::npos) return access(".", W_OK | X_OK) == 0;
    dir = slash == 0 ? "/" : dir.substr(0, slash);
    if (dir == "/") return access("/", W_OK | X_OK) == 0;
  }
  return false;
}

void environment_rules(const RuleInputs& in, std::vector<Finding>& out) {
  if (in.module_loading != nullptr && strcasecmp(in.module_loading, "EAGER") == 0)
    out.push_back({FindingId::module_loading_eager, "CUDA_MODULE_LOADING",
                   fmt::format("CUDA_MODULE_LOADING=EAGER; this process loaded {} modules in {:.0f} ms", in.modules.count,
                               in.modules.ns / 1e6),
                   {"CUDA_MODULE_LOADING=" + std::string(in.module_loading)}});
  const bool jitted = in.modules.ptx_jit_bytes > 0;
  if (in.cache_disable != nullptr && std::strcmp(in.cache_disable, "1") == 0)
    out.push_back({FindingId::jit_cache_disabled, "CUDA_CACHE_DISABLE",
                   jitted ? fmt::format("CUDA_CACHE_DISABLE=1 and this process JIT-compiled {} of PTX", mib(in.modules.ptx_jit_bytes))
                          : "CUDA_CACHE_DISABLE=1 (no PTX was JIT-compiled in this process so far)",
                   {"CUDA_CACHE_DISABLE=1"}});
  if (!jitted) return;  // the cache only matters to a process that JITs
  const std::string folder = cache_folder(in);
  if (!folder.empty() && !writable_or_creatable(folder))
    out.push_back({FindingId::jit_cache_unwritable, folder,
                   fmt::format("the JIT cache folder {} cannot be written; {} of PTX was JIT-compiled", folder,
                               mib(in.modules.ptx_jit_bytes)),
                   {in.cache_path ? "CUDA_CACHE_PATH=" + std::string(in.cache_path) : "default: $HOME/.nv/ComputeCache"}});
  uint64_t size = kDefaultJitCacheBytes;
  std::string source = "default (1 GiB)";
  if (in.cache_maxsize != nullptr && *in.cache_maxsize != '\0') {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(in.cache_maxsize, &end, 10);
    if (end != in.cache_maxsize && *end == '\0') size = v, source = "CUDA_CACHE_MAXSIZE=" + std::string(in.cache_maxsize);
  }
  // The cache holds the compiled SASS, which is usually larger than the PTX it
  // came from; a cache smaller than the PTX certainly cannot hold it.
  if (size < in.modules.ptx_jit_bytes)
    out.push_back({FindingId::jit_cache_too_small, "CUDA_CACHE_MAXSIZE",
                   fmt::format("the JIT cache holds {} but this process JIT-compiled {} of PTX", mib(size),
                               mib(in.modules.ptx_jit_bytes)),
                   {source}});
}

// One calling module's loads of one kind (PTX JIT-compiled, or no image for the GPU).
struct ModuleGroup {
  uint64_t loads = 0, bytes = 0, ns = 0;
  int sm = 0;
  std::vector<std::string> archs;
};

// One finding per calling module whose device code was JIT-compiled or had no image for the
// GPU, with the loads' totals as evidence.
void module_image_rules(const RuleInputs& in, std::vector<Finding>& out) {
  std::map<std::string, ModuleGroup> jit, none;
  std::set<std::string> usable;  // modules some load of which had code that runs on this GPU
  for (const auto& m : *in.loads) {
    if (m.result == 0 && (m.coverage == "sass" || m.coverage == "ptx_jit")) usable.insert(m.who());
    auto* g = m.coverage == "ptx_jit" ? &jit[m.who()] : (m.coverage == "none" || m.result == 209) ? &none[m.who()] : nullptr;
    if (g == nullptr) continue;
    g->loads++, g->ns += m.dt_ns, g->sm = m.sm;
    g->bytes += m.coverage == "ptx_jit" ? m.ptx_jit_bytes : m.bytes;
    if (g->archs.size() < 4 && std::find(g->archs.begin(), g->archs.end(), m.archs) == g->archs.end()) g->archs.push_back(m.archs);
  }
  auto evidence = [](const ModuleGroup& g) {
    std::vector<std::string> ev{fmt::format("{} load(s), {:.1f} ms", g.loads, g.ns / 1e6)};
    for (const auto& a : g.archs) ev.push_back("device code for: " + (a.empty() ? std::string("(not readable)") : a));
    return ev;
  };
  // Device code of NVIDIA's or a framework's own library (under site-packages: the nvidia
  // wheels, torch, jaxlib, cupy) is not the user's to rebuild: its PTX JIT is one-off work the
  // JIT cache keeps (the env.jit-cache-* rules say when the cache cannot), and a module of it
  // with no image for this GPU, next to others of it that have one, is one the library does
  // not use here (NCCL carries such); both are info. Either stays the row's severity for the
  // user's own code, and for a library none of whose device code runs on this GPU.
  for (const auto& [caller, g] : jit) {
    Finding f{FindingId::module_ptx_jit, caller,
              fmt::format("device code of {} loaded with no SASS for sm_{}: {} of PTX JIT-compiled", caller, g.sm, mib(g.bytes)),
              evidence(g)};
    const std::string pkg = framework_of(caller.c_str());
    if (!pkg.empty()) {
      f.vendor_internal = true;
      f.exact_fix = fmt::format("Nothing to do: the PTX is {}'s own (package {}); the driver JIT-compiles it once and keeps the "
                                "result in the JIT cache, so later runs load it from there. A newer {} may ship SASS for sm_{}.",
                                symbols::base_name(caller), pkg, pkg, g.sm);
    }
    out.push_back(std::move(f));
  }
  for (const auto& [caller, g] : none) {
    Finding f{FindingId::module_no_kernel_image, caller,
              fmt::format("device code of {} loaded with no kernel image for sm_{}", caller, g.sm), evidence(g)};
    const std::string pkg = framework_of(caller.c_str());
    if (!pkg.empty() && usable.count(caller) != 0) {
      f.vendor_internal = true;
      f.evidence.push_back(fmt::format("other device code of {} loaded for sm_{}", symbols::base_name(caller), g.sm));
      f.exact_fix = fmt::format("Nothing to do while {}'s calls succeed: it also loaded device code that runs on sm_{}, and this "
                                "module is one it does not use on this GPU. If its calls fail with \"no kernel image\", install a "
                                "build of package {} made for sm_{}.",
                                symbols::base_name(caller), g.sm, pkg, g.sm);
    }
    out.push_back(std::move(f));
  }
}

// Device code loaded at run time that is mostly for other GPUs: the bytes the process
// mapped for nothing (the fatbins the CUDA runtime registers carry every architecture).
void module_other_arch_rule(const RuleInputs& in, std::vector<Finding>& out) {
  if (in.modules.sass_bytes >= (64ull << 20) && in.modules.sass_bytes_for_sm * 2 < in.modules.sass_bytes) {
    std::map<std::string, std::pair<uint64_t, uint64_t>> by;  // owner (else caller) -> (SASS, SASS for this GPU)
    for (const auto& m : *in.loads) by[m.who()].first += m.sass_bytes, by[m.who()].second += m.sass_bytes_for_sm;
    std::vector<std::pair<uint64_t, std::string>> top;
    for (const auto& [c, b] : by) top.emplace_back(b.first - std::min(b.first, b.second), c);
    std::sort(top.rbegin(), top.rend());
    std::vector<std::string> ev;
    for (size_t i = 0; i < top.size() && i < 5; ++i) ev.push_back(fmt::format("{} for other GPUs: {}", mib(top[i].first), top[i].second));
    out.push_back({FindingId::fatbin_mostly_other_archs, "module loads",
                   fmt::format("of {} of machine code loaded at run time, {} runs on this GPU", mib(in.modules.sass_bytes),
                               mib(in.modules.sass_bytes_for_sm)),
                   ev, true});
  }
}

// Module loads that took long in total, the slowest callers first.
void module_slow_rule(const RuleInputs& in, std::vector<Finding>& out) {
  if (in.modules.ns >= in.slow_load_ns) {
    std::map<std::string, uint64_t> by_caller;
    for (const auto& m : *in.loads) by_caller[m.who()] += m.dt_ns;
    std::vector<std::pair<uint64_t, std::string>> top;
    for (const auto& [c, ns] : by_caller) top.emplace_back(ns, c);
    std::sort(top.rbegin(), top.rend());
    std::vector<std::string> ev;
    for (size_t i = 0; i < top.size() && i < 5; ++i) ev.push_back(fmt::format("{:.0f} ms: {}", top[i].first / 1e6, top[i].second));
    if (in.modules.ptx_jit_bytes > 0) ev.push_back(fmt::format("PTX JIT-compiled: {}", mib(in.modules.ptx_jit_bytes)));
    out.push_back({FindingId::module_load_slow, "module loads",
                   fmt::format("{} module loads took {:.2f} s in total", in.modules.count, in.modules.ns / 1e9), ev, true});
  }
}

}  // namespace

std::vector<Finding> live_library_rules(const RuleInputs& in) {
  std::vector<Finding> out;
  driver_rules(in, out);
  environment_rules(in, out);
  if (in.loads != nullptr) {
    module_image_rules(in, out);
    module_other_arch_rule(in, out);
    module_slow_rule(in, out);
  }
  return out;
}

bool is_stub_libcuda(const std::string& path) { return path.find("/stubs/") != std::string::npos; }

std::vector<Finding> library_copy_findings(const std::vector<LibraryCopy>& all, const CopiesSeen& seen) {
  // One file under two names is one copy; a copy of no known major is nobody's twin.
  std::vector<const LibraryCopy*> copies;
  std::set<std::string> reals;
  for (const auto& c : all)
    if (c.major >= 0 && reals.insert(c.real.empty() ? c.path : c.real).second) copies.push_back(&c);
  std::map<std::string, std::vector<const LibraryCopy*>> by_family, by_library;  // family; "stem.so.major"
  for (const LibraryCopy* c : copies) {
    by_family[c->family].push_back(c);
    by_library[c->stem + ".so." + std::to_string(c->major)].push_back(c);
  }
  const bool process = seen.where == CopiesSeen::in_process;
  const std::string in_this = seen.process.empty() ? " are loaded in this process" : "";
  std::vector<Finding> out;
  for (const auto& [family, items] : by_family) {
    std::set<int> majors, loose;  // loose: the majors outside the frameworks' own bundled copies
    for (const LibraryCopy* c : items) {
      majors.insert(c->major);
      if (!c->bundled) loose.insert(c->major);
    }
    if (majors.size() < 2) continue;
    const std::string n = std::to_string(majors.size()) + " majors of " + family;
    Finding f = process ? Finding{FindingId::mixed_majors_in_process, seen.process.empty() ? family : seen.process,
                                  seen.process.empty() ? n + in_this : symbols::base_name(seen.process) + " loads " + n, {}}
                        : Finding{FindingId::mixed_majors, family, n + " in the scanned set", {}};
    for (const LibraryCopy* c : items) f.evidence.push_back(c->evidence);
    // One major at most outside the frameworks' bundled copies (Triton's cupti 12 next to NVIDIA's
    // cupti 13 wheel) is the framework's choice, nothing the user can change; in one process it
    // still fails.
    f.vendor_internal = !process && loose.size() < 2;
    out.push_back(std::move(f));
  }
  for (const auto& [name, items] : by_library) {
    if (items.size() < 2) continue;
    Finding f{FindingId::duplicate_library, name, std::to_string(items.size()) + " copies of " + name + (process ? in_this : ""), {}};
    bool all_vendor = true;
    for (const LibraryCopy* c : items) {
      f.evidence.push_back(c->evidence);
      all_vendor = all_vendor && c->vendor;
    }
    f.vendor_internal = all_vendor;  // copies that NVIDIA's and the frameworks' wheels bring along
    out.push_back(std::move(f));
  }
  return out;
}

bool cudnn_split(const CudnnHome& home, const std::vector<CudnnPart>& parts) {
  for (const auto& p : parts) {
    if (p.folder != home.folder) return true;
    const bool both_exact = home.file_version.find('.') != std::string::npos && p.version.find('.') != std::string::npos;
    if (both_exact && p.version != home.file_version) return true;
  }
  return false;
}

std::optional<Finding> scanned_cudnn_split(const std::string& path, const CudnnHome& home, const std::vector<CudnnPart>& parts,
                                           std::vector<std::string> evidence) {
  if (!cudnn_split(home, parts)) return std::nullopt;
  Finding f{FindingId::cudnn_split_folders, path,
            "libcudnn in " + home.folder + " would load sub-libraries from elsewhere or of another version", std::move(evidence)};
  return f;
}

std::vector<Finding> loaded_library_findings(const std::vector<symbols::LoadedLibrary>& libs) {
  std::vector<Finding> out;
  std::vector<LibraryCopy> copies;
  std::vector<const symbols::LoadedLibrary*> cudnn;
  std::set<std::string> seen;
  for (const auto& l : libs) {
    if (l.linkage == "static") continue;  // its own private copy: by design, not a clash
    if (!seen.insert(l.real).second) continue;  // one file under two names
    if (l.family == "cuda" && (is_stub_libcuda(l.path) || is_stub_libcuda(l.real)))
      out.push_back({FindingId::stub_libcuda, l.path, "the link-time stub libcuda is loaded instead of the driver: every CUDA call fails",
                     {l.path}});
    const auto name = symbols::classify_cuda_library(symbols::base_name(l.path));
    copies.push_back({l.path, l.real, l.family, name ? name->stem : l.family, l.major,
                      l.real + (l.version.empty() ? "" : " (" + l.version + ")")});
    if (l.family == "cudnn") cudnn.push_back(&l);
  }
  for (auto& f : library_copy_findings(copies, CopiesSeen{})) out.push_back(std::move(f));
  if (cudnn.size() < 2) return out;
  // cuDNN's parts against its main library (libcudnn.so.N) when it is loaded, else the first part.
  const symbols::LoadedLibrary* main = cudnn.front();
  for (const auto* l : cudnn)
    if (auto n = symbols::classify_cuda_library(symbols::base_name(l->path)); n && n->stem == "cudnn") main = l;
  const CudnnHome home{symbols::dir_name(main->real), main->version_source == "file name" ? main->version : ""};
  std::vector<CudnnPart> parts;
  std::set<std::string> folders;
  Finding f{FindingId::cudnn_split_folders, "cudnn", "", {}};
  for (const auto* l : cudnn) {
    folders.insert(symbols::dir_name(l->real));
    f.evidence.push_back(l->real + (l->version.empty() ? "" : " (" + l->version + ")"));
    if (l != main) parts.push_back({symbols::dir_name(l->real), l->version_source == "file name" ? l->version : ""});
  }
  if (!cudnn_split(home, parts)) return out;
  f.message = folders.size() > 1 ? "cuDNN parts loaded from " + std::to_string(folders.size()) + " folders"
                                 : "cuDNN parts of another version than " + symbols::base_name(main->real) + " are loaded";
  out.push_back(std::move(f));
  return out;
}

std::vector<Finding> missing_import_findings(const std::vector<symbols::MissingImport>& missing) {
  std::map<std::pair<std::string, std::string>, std::vector<symbols::MissingImport>> by;
  for (const auto& m : missing) by[{m.importer, m.provider_path}].push_back(m);
  std::vector<Finding> out;
  for (const auto& [key, list] : by) {
    const auto& first = list.front();
    Finding f{FindingId::versioned_symbol_shortfall, key.first,
              fmt::format("{} imports {}@{} from {}, and the loaded {} does not define it: the first call ends in "
                          "\"undefined symbol\"{}",
                          key.first, first.symbol, first.version, first.provider_soname, key.second,
                          list.size() > 1 ? fmt::format(" ({} such functions)", list.size()) : ""),
              {}};
    for (size_t i = 0; i < list.size() && i < 5; ++i)
      f.evidence.push_back("undefined symbol: " + list[i].symbol + ", version " + list[i].version);
    f.evidence.push_back("provider as loaded: " + key.second);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace cudashim::policy
