// loaded_libraries.cpp: the live library inventory (the facts; its rules are policy/rules/libraries.cpp).
#include "symbols/path_names.h"
#include "symbols/loaded_libraries.h"

#include <link.h>
#include <limits.h>
#include <stdlib.h>

#include <cstring>
#include <dlfcn.h>

#include <map>
#include <set>

#include "symbols/cuda_library.h"
#include "symbols/loaded_memory.h"
#include "symbols/walk_objects.h"

namespace cudashim::symbols {

namespace {

// Asks a loaded library for its own version through its version API (a getter that
// needs no context or device and does no first-use initialization). Returns "" when the
// family has none or it fails. cuDNN is asked nothing: on the event stream's thread
// cudnnGetVersion of libcudnn_graph.so.9 (9.19) crashed with SIGSEGV inside itself in a
// libtorch C++ program that loads cuDNN but never calls it, every time (GPU host,
// gpu/run_libtorch_crash.sh, 2026-11-29), while it answered in Python jobs that had used
// cuDNN. Why is not known; calling into a library the program has not used yet is not
// ours to do. Its version comes from the file name.
std::string api_version(const std::string& path, const std::string& family, std::string& source) {
  void* h = open_loaded(path.c_str(), RTLD_LAZY);
  if (h == nullptr) return "";
  std::string v;
  auto sym = [&](const char* name) { return dlsym(h, name); };
  if (family == "cudart") {
    if (auto f = reinterpret_cast<int (*)(int*)>(sym("cudaRuntimeGetVersion"))) {
      int x = 0;
      if (f(&x) == 0 && x > 0) v = std::to_string(x / 1000) + "." + std::to_string(x % 1000 / 10), source = "cudaRuntimeGetVersion";
    }
  } else if (family == "nccl") {
    if (auto f = reinterpret_cast<int (*)(int*)>(sym("ncclGetVersion"))) {
      int x = 0;  // 2.9+: major*10000 + minor*100 + patch
      if (f(&x) == 0 && x > 0)
        v = x >= 10000 ? std::to_string(x / 10000) + "." + std::to_string(x % 10000 / 100) + "." + std::to_string(x % 100)
                       : std::to_string(x / 1000) + "." + std::to_string(x % 1000 / 100) + "." + std::to_string(x % 100),
        source = "ncclGetVersion";
    }
  } else if (family == "cublasLt") {
    if (auto f = reinterpret_cast<size_t (*)()>(sym("cublasLtGetVersion"))) {
      const size_t x = f();  // major*10000 + minor*100 + patch
      if (x > 0) v = std::to_string(x / 10000) + "." + std::to_string(x % 10000 / 100) + "." + std::to_string(x % 100), source = "cublasLtGetVersion";
    }
  } else if (family == "nvrtc") {
    if (auto f = reinterpret_cast<int (*)(int*, int*)>(sym("nvrtcVersion"))) {
      int a = 0, b = 0;
      if (f(&a, &b) == 0) v = std::to_string(a) + "." + std::to_string(b), source = "nvrtcVersion";
    }
  } else if (family == "nvJitLink") {
    if (auto f = reinterpret_cast<int (*)(unsigned*, unsigned*)>(sym("nvJitLinkVersion"))) {
      unsigned a = 0, b = 0;
      if (f(&a, &b) == 0) v = std::to_string(a) + "." + std::to_string(b), source = "nvJitLinkVersion";
    }
  }
  close_loaded(h);  // NOLOAD took a reference: give it back
  return v;
}

// One loaded object's dynamic facts, read from its own PT_DYNAMIC in memory.
struct LoadedObject {
  std::string name;
  std::vector<std::string> needed;
  std::string rpath, runpath;
};

// Reads DT_NEEDED, DT_RPATH, DT_RUNPATH. glibc relocates DT_STRTAB in place on
// most targets; an unrelocated (small) value is taken relative to the base. Every
// pointer is checked against the object's segments before it is read.
LoadedObject read_object(const dl_phdr_info* info) {
  LoadedObject o;
  o.name = info->dlpi_name ? info->dlpi_name : "";
  const ElfW(Dyn)* dyn = dynamic_of(info);
  if (dyn == nullptr) return o;
  uintptr_t strtab = 0;
  size_t strsz = 0;
  std::vector<std::pair<long, size_t>> wanted;  // tag, string offset
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL && in_segments(info, reinterpret_cast<uintptr_t>(d + 1), sizeof *d); ++d) {
    if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
    else if (d->d_tag == DT_STRSZ) strsz = d->d_un.d_val;
    else if (d->d_tag == DT_NEEDED || d->d_tag == DT_RPATH || d->d_tag == DT_RUNPATH) wanted.emplace_back(d->d_tag, d->d_un.d_val);
    if (wanted.size() > 4096) break;
  }
  strtab = relocated(info, strtab);
  if (strtab == 0 || strsz == 0 || !in_segments(info, strtab, strsz)) return o;
  const char* base = reinterpret_cast<const char*>(strtab);
  for (const auto& [tag, off] : wanted) {
    if (off >= strsz) continue;
    const std::string text(base + off, strnlen(base + off, strsz - off));
    if (tag == DT_NEEDED) o.needed.push_back(text);
    else if (tag == DT_RPATH) o.rpath = text;
    else o.runpath = text;
  }
  return o;
}

std::string real_dir(const std::string& dir) {
  char buf[PATH_MAX];
  return realpath(dir.c_str(), buf) ? std::string(buf) : dir;
}

// Which entry of a colon-separated search list holds `dir` ($ORIGIN expanded against `origin`).
std::string list_entry_holding(const std::string& list, const std::string& dir, const std::string& origin) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    std::string e = list.substr(start, end - start);
    std::string x = e;
    for (const char* tok : {"${ORIGIN}", "$ORIGIN"})
      for (size_t k; (k = x.find(tok)) != std::string::npos;) x.replace(k, std::strlen(tok), origin);
    if (!x.empty() && real_dir(x) == dir) return e;
    start = end + 1;
  }
  return "";
}

// Why the loader took the file in `real` for a request by `requester` (a bare name).
std::string search_reason(const std::string& real, const LoadedObject* requester, const std::string& ld_library_path) {
  const std::string dir = real_dir(dir_name(real));
  const std::string origin = requester ? real_dir(dir_name(requester->name)) : "";
  if (requester != nullptr && requester->runpath.empty() && !requester->rpath.empty()) {
    if (std::string e = list_entry_holding(requester->rpath, dir, origin); !e.empty())
      return "in the RPATH of " + requester->name + " (" + e + ")";
  }
  if (std::string e = list_entry_holding(ld_library_path, dir, ""); !e.empty()) return "in LD_LIBRARY_PATH (" + e + ")";
  if (requester != nullptr && !requester->runpath.empty()) {
    if (std::string e = list_entry_holding(requester->runpath, dir, origin); !e.empty())
      return "in the RUNPATH of " + requester->name + " (" + e + ")";
  }
  return "from the loader cache or a default folder (" + dir + ")";
}

}  // namespace

std::string cuda_version_text(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::vector<LoadedLibrary> loaded_cuda_libraries(const InventoryHints& hints) {
  std::vector<LoadedLibrary> libs = loaded_cuda_libraries();
  std::vector<LoadedObject> objects;
  symbols::walk_objects(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        static_cast<std::vector<LoadedObject>*>(data)->push_back(read_object(info));
        return 0;
      },
      &objects);
  auto object_named = [&](const std::string& name) -> const LoadedObject* {
    for (const auto& o : objects)
      if (!name.empty() && o.name == name) return &o;
    return nullptr;
  };
  for (auto& lib : libs) {
    const std::string base = base_name(lib.path);
    // Newest request first: the dlopen that named this file (by path or by name).
    for (auto it = hints.dlopens.rbegin(); it != hints.dlopens.rend() && lib.how.empty(); ++it) {
      if (it->name.empty()) continue;
      const bool by_path = it->name.find('/') != std::string::npos;
      char buf[PATH_MAX];
      const std::string asked_real = by_path && realpath(it->name.c_str(), buf) ? std::string(buf) : "";
      if (by_path ? (asked_real == lib.real || it->name == lib.path) : base_name(it->name) == base ||
                                                                         base_name(it->name) == base_name(lib.real)) {
        lib.how = "dlopen";
        lib.loaded_by = it->caller_module;
        lib.requested = it->name;
        lib.reason = by_path ? "path given by the caller"
                             : search_reason(lib.real, object_named(it->caller_module), hints.ld_library_path);
      }
    }
    if (!lib.how.empty()) continue;
    for (const auto& o : objects) {
      if (o.name == lib.path) continue;
      bool needs = false;
      for (const auto& n : o.needed) needs = needs || n == base;
      if (!needs) continue;
      lib.how = "DT_NEEDED";
      lib.loaded_by = o.name.empty() ? "the program" : o.name;
      lib.requested = base;
      lib.reason = search_reason(lib.real, &o, hints.ld_library_path);
      break;
    }
  }
  for (const auto& [module, version] : hints.static_runtimes) {
    LoadedLibrary l;
    l.path = module;
    char buf[PATH_MAX];
    l.real = realpath(module.c_str(), buf) ? std::string(buf) : module;
    l.family = "cudart";
    l.version = cuda_version_text(version);
    l.version_source = "cuGetProcAddress cudaVersion";
    l.major = version > 0 ? version / 1000 : -1;
    l.linkage = "static";
    l.how = "static";
    l.loaded_by = module;
    l.reason = "a CUDA runtime linked into this module asked the driver for its entry points";
    libs.push_back(std::move(l));
  }
  return libs;
}

std::vector<LoadedLibrary> loaded_cuda_libraries() {
  std::vector<LoadedLibrary> out;
  symbols::walk_objects(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        const char* name = info->dlpi_name;
        if (name == nullptr || *name == '\0') return 0;
        const char* base = std::strrchr(name, '/');
        base = base ? base + 1 : name;
        auto c = classify_cuda_library(base);
        if (!c) return 0;
        LoadedLibrary lib;
        lib.path = lib.real = name;
        lib.family = c->family;
        lib.version = c->version;
        lib.major = c->major;
        char buf[PATH_MAX];
        if (realpath(name, buf) != nullptr) {
          lib.real = buf;
          const char* rb = std::strrchr(buf, '/');
          auto rc = classify_cuda_library(rb ? rb + 1 : buf);  // libcudart.so.12 -> libcudart.so.12.9.79
          if (rc && rc->version.size() > lib.version.size()) lib.version = rc->version;
        }
        static_cast<std::vector<LoadedLibrary>*>(data)->push_back(std::move(lib));
        return 0;
      },
      &out);
  for (auto& lib : out) {
    lib.version_source = lib.version.empty() ? "" : "file name";
    std::string source;
    const std::string v = api_version(lib.path, lib.family, source);
    if (!v.empty()) lib.version = v, lib.version_source = source;
  }
  return out;
}

}  // namespace cudashim::symbols
