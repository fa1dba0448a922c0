// loaded_libraries.cpp: the live library inventory.
#include "symbols/loaded_libraries.h"

#include <link.h>
#include <limits.h>
#include <stdlib.h>

#include <cstring>
#include <map>
#include <set>

#include "symbols/cuda_library.h"

namespace cudashim::symbols {

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
        LoadedLibrary lib{name, name, c->family, c->version, c->major};
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
