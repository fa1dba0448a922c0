// loaded_libraries.h: the CUDA-family libraries loaded in this process right now,
// and what is wrong with the set (two copies of one family, two majors, the
// link-time stub libcuda, cuDNN parts from two folders).
#pragma once
#include <string>
#include <vector>

#include "symbols/findings.h"

namespace cudashim::symbols {

struct LoadedLibrary {
  std::string path;     // as the loader has it (l_name)
  std::string real;     // realpath: two names of one file are one copy
  std::string family;   // cuda_libraries.def
  std::string version;  // from the library's version API when it has one, else from the file name
  std::string version_source;  // "cudaRuntimeGetVersion", "ncclGetVersion", ..., or "file name"
  int major = -1;
};

// Walks the loaded objects (dl_iterate_phdr) for CUDA-family libraries. Not for
// hot paths: it allocates and resolves paths.
std::vector<LoadedLibrary> loaded_cuda_libraries();

// The findings the set shows (symbols/findings.def rows), each naming the files.
std::vector<Finding> loaded_library_findings(const std::vector<LoadedLibrary>& libs);

}  // namespace cudashim::symbols
