// Which CUDA-family library a file name denotes, and the version its name carries.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudashim::symbols {

// One row of catalog/cuda_libraries.def.
struct CudaLibraryRow {
  const char* stem;     // "cudnn_ops"
  const char* family;   // "cudnn"
  bool cudnn_sublibrary;
};

// What a file name (or soname) says: "libcudart.so.12.9.79" -> stem cudart, family cudart,
// version "12.9.79", major 12.
struct CudaLibraryName {
  std::string stem;
  std::string family;
  std::string version;  // everything after ".so.", "" for an unversioned name
  int major = -1;       // the first number of `version`, -1 when none
  bool cudnn_sublibrary = false;
};

// Parses `file_name` (a base name, no folder) when it names a CUDA-family library
// ("lib<stem>.so[.<version>]"); nullopt for any other name.
std::optional<CudaLibraryName> classify_cuda_library(std::string_view file_name);

// The cuDNN sub-library sonames libcudnn.so.<major> loads by name, e.g. "libcudnn_ops.so.9".
std::vector<std::string> cudnn_sublibrary_sonames(int major);

}  // namespace cudashim::symbols
