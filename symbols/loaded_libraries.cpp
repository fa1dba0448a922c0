// loaded_libraries.cpp: the live library inventory.
#include "symbols/loaded_libraries.h"

#include <link.h>
#include <limits.h>
#include <stdlib.h>

#include <cstring>
#include <dlfcn.h>

#include <map>
#include <set>

#include "symbols/cuda_library.h"

namespace cudashim::symbols {

namespace {

// Asks a loaded library for its own version through its version API (a getter that
// needs no context or device). Returns "" when the family has none or it fails.
std::string api_version(const std::string& path, const std::string& family, std::string& source) {
  void* h = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
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
  } else if (family == "cudnn") {
    if (auto f = reinterpret_cast<size_t (*)()>(sym("cudnnGetVersion"))) {
      const size_t x = f();  // 9.x: major*10000 + minor*100 + patch
      if (x > 0) v = std::to_string(x / 10000) + "." + std::to_string(x % 10000 / 100) + "." + std::to_string(x % 100), source = "cudnnGetVersion";
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
  dlclose(h);  // NOLOAD took a reference: give it back
  return v;
}

}  // namespace

std::vector<LoadedLibrary> loaded_cuda_libraries() {
  std::vector<LoadedLibrary> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        const char* name = info->dlpi_name;
        if (name == nullptr || *name == '\0') return 0;
        const char* base = std::strrchr(name, '/');
        base = base ? base + 1 : name;
        auto c = classify_cuda_library(base);
        if (!c) return 0;
        LoadedLibrary lib{name, name, c->family, c->version, "", c->major};
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

std::vector<Finding> loaded_library_findings(const std::vector<LoadedLibrary>& libs) {
  std::vector<Finding> out;
  std::map<std::string, std::vector<const LoadedLibrary*>> by_family;
  std::set<std::string> seen;
  for (const auto& l : libs) {
    if (!seen.insert(l.real).second) continue;  // one file under two names
    by_family[l.family].push_back(&l);
    if (l.family == "cuda" && l.path.find("/stubs/") != std::string::npos)
      out.push_back({FindingId::stub_libcuda, l.path, "the link-time stub libcuda is loaded instead of the driver: every CUDA call fails",
                     {l.path}});
  }
  for (const auto& [family, copies] : by_family) {
    if (copies.size() < 2) continue;
    std::set<int> majors;
    std::set<std::string> folders;
    Finding f{FindingId::duplicate_library, family, "", {}};
    for (const LoadedLibrary* l : copies) {
      majors.insert(l->major);
      folders.insert(l->real.substr(0, l->real.rfind('/')));
      f.evidence.push_back(l->real + (l->version.empty() ? "" : " (" + l->version + ")"));
    }
    if (family == "cudnn") {
      if (folders.size() > 1) {
        f.id = FindingId::cudnn_split_folders;
        f.message = "cuDNN parts loaded from " + std::to_string(folders.size()) + " folders";
        out.push_back(f);
      }
      continue;
    }
    if (majors.size() > 1) {
      f.id = FindingId::mixed_majors_in_process;
      f.message = std::to_string(majors.size()) + " majors of " + family + " are loaded in this process";
    } else {
      f.message = std::to_string(copies.size()) + " copies of " + family + " are loaded in this process";
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace cudashim::symbols
