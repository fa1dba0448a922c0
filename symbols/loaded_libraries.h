// loaded_libraries.h: the CUDA-family libraries loaded in this process right now, how each
// came in and why that file. What is wrong with the set is policy/rules/libraries.h's.
#pragma once
#include <string>
#include <vector>


namespace cudashim::symbols {

struct LoadedLibrary {
  std::string path;     // as the loader has it (l_name)
  std::string real;     // realpath: two names of one file are one copy
  std::string family;   // catalog/cuda_libraries.def
  std::string version;  // from the library's version API when it has one, else from the file name
  std::string version_source;  // "cudaRuntimeGetVersion", "ncclGetVersion", ..., or "file name"
  int major = -1;
  std::string linkage = "shared";  // "static": a CUDA runtime linked into `path` (seen through cuGetProcAddress)
  std::string how;        // "dlopen", "DT_NEEDED", "static", "" (present before the shim looked, unexplained)
  std::string loaded_by;  // the module whose dlopen (or DT_NEEDED) brought it in
  std::string requested;  // the name that was asked for ("libcudart.so.12", or a full path)
  std::string reason;     // why this file: "path given by the caller", "RUNPATH of X ($ORIGIN/...)", ...
};

// A dlopen seen by the shim: the name asked for and the module that asked.
struct DlopenSeen {
  std::string name;
  std::string caller_module;
};

// What the watcher knows beyond the loader's own list: dlopen requests (oldest
// first) and the modules with a CUDA runtime linked in statically (module path and
// the runtime version they passed to cuGetProcAddress, e.g. 12090).
struct InventoryHints {
  std::vector<DlopenSeen> dlopens;
  std::vector<std::pair<std::string, int>> static_runtimes;
  std::string ld_library_path;  // the process's LD_LIBRARY_PATH at start
};

// Walks the loaded objects (dl_iterate_phdr) for CUDA-family libraries. Not for
// hot paths: it allocates and resolves paths.
std::vector<LoadedLibrary> loaded_cuda_libraries();

// The same, with how each library came in and why that file (from `hints` and the
// loaded objects' own DT_NEEDED, RPATH and RUNPATH, read from memory), plus one
// row per statically linked CUDA runtime.
std::vector<LoadedLibrary> loaded_cuda_libraries(const InventoryHints& hints);

// "12.9" from a cudaVersion number such as 12090.
std::string cuda_version_text(int v);

}  // namespace cudashim::symbols

namespace cudashim::symbols {

// A versioned function a loaded CUDA-family library imports from another CUDA-family
// library, which that library (as loaded) does not define: the first call through it
// ends in "undefined symbol" under lazy binding. Read from memory (DT_SYMTAB, DT_VERSYM,
// DT_VERNEED of the importing object), checked with dlvsym on the loaded provider.
struct MissingImport {
  std::string importer;  // path of the library that needs it
  std::string symbol, version, provider_soname;
  std::string provider_path;  // the provider as loaded, "" when it is not loaded
};
std::vector<MissingImport> missing_versioned_imports(const std::vector<LoadedLibrary>& libs);

}  // namespace cudashim::symbols
