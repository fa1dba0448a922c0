// cupti_locate.cpp: see cupti_locate.h.
#include "shim/cupti_locate.h"

#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "symbols/path_names.h"
#include "symbols/walk_objects.h"

namespace cudashim::shim {
namespace {

using symbols::base_name;
using symbols::dir_name;

// The major of a soname's first number: libcudart.so.12 -> 12.
int soname_major(const std::string& path) {
  const std::string base = base_name(path);
  const size_t dot = base.find(".so.");
  return dot == std::string::npos ? 0 : std::atoi(base.c_str() + dot + 4);
}

bool ends_with(const std::string& s, const char* tail) {
  const size_t n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

}  // namespace

CuptiLocation locate_cupti(int driver_version) {
  CuptiLocation r;
  r.found_by = "";
  std::string cupti, cudart;  // the first of each loaded
  for (const std::string& path : symbols::loaded_object_paths()) {
    const std::string base = base_name(path);
    if (cupti.empty() && base.rfind("libcupti.so", 0) == 0) cupti = path;
    if (cudart.empty() && base.rfind("libcudart.so.", 0) == 0) cudart = path;
  }
  if (!cupti.empty()) {
    r.path = cupti, r.found_by = "already loaded in the process", r.major = soname_major(cupti);
    return r;
  }
  r.tried = "no libcupti loaded in the process";
  r.major = cudart.empty() ? driver_version / 1000 : soname_major(cudart);
  const std::string file = "libcupti.so." + std::to_string(r.major);
  auto try_path = [&](const std::string& p, const char* why) {
    if (access(p.c_str(), R_OK) == 0) {
      r.path = p, r.found_by = why;
      return true;
    }
    r.tried += "; " + p + " (absent)";
    return false;
  };
  if (!cudart.empty()) {
    const std::string dir = dir_name(cudart);
    if (try_path(dir + "/" + file, "next to the loaded libcudart")) return r;
    if (ends_with(dir, "/nvidia/cuda_runtime/lib") &&
        try_path(dir.substr(0, dir.size() - std::strlen("cuda_runtime/lib")) + "cuda_cupti/lib/" + file,
                 "the nvidia-cuda-cupti wheel next to the loaded libcudart's"))
      return r;
  } else {
    r.tried += "; no libcudart loaded";
  }
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') {
    if (try_path(std::string(home) + "/extras/CUPTI/lib64/" + file, "$CUDA_HOME/extras/CUPTI/lib64")) return r;
  } else {
    r.tried += "; CUDA_HOME unset";
  }
  if (try_path("/usr/local/cuda/extras/CUPTI/lib64/" + file, "/usr/local/cuda/extras/CUPTI/lib64")) return r;
  return r;
}

}  // namespace cudashim::shim
