#include "symbols/cuda_library.h"

#include <cctype>

namespace cudashim::symbols {
namespace {

constexpr CudaLibraryRow kCudaLibraries[] = {
#define CUDA_LIBRARY(stem, family, sub) {stem, family, sub},
#include "catalog/cuda_libraries.def"
#undef CUDA_LIBRARY
};

}  // namespace

std::optional<CudaLibraryName> classify_cuda_library(std::string_view file_name) {
  if (file_name.substr(0, 3) != "lib") return std::nullopt;
  const std::size_t so = file_name.find(".so");
  if (so == std::string_view::npos || so <= 3) return std::nullopt;
  const std::string_view rest = file_name.substr(so + 3);
  if (!rest.empty() && rest[0] != '.') return std::nullopt;  // "libfoo.something"
  const std::string_view stem = file_name.substr(3, so - 3);
  for (const auto& row : kCudaLibraries) {
    if (stem != row.stem) continue;
    CudaLibraryName out;
    out.stem = row.stem;
    out.family = row.family;
    out.cudnn_sublibrary = row.cudnn_sublibrary;
    out.version = rest.empty() ? std::string() : std::string(rest.substr(1));
    if (!out.version.empty() && std::isdigit(static_cast<unsigned char>(out.version[0]))) {
      int major = 0;
      for (char c : out.version) {
        if (!std::isdigit(static_cast<unsigned char>(c))) break;
        if (major > 100000) break;
        major = major * 10 + (c - '0');
      }
      out.major = major;
    }
    return out;
  }
  return std::nullopt;
}

std::vector<std::string> cudnn_sublibrary_sonames(int major) {
  std::vector<std::string> out;
  for (const auto& row : kCudaLibraries)
    if (row.cudnn_sublibrary) out.push_back("lib" + std::string(row.stem) + ".so." + std::to_string(major));
  return out;
}

}  // namespace cudashim::symbols
