// catalog/cuda_drivers.h: the CUDA toolkit -> minimum driver table (catalog/cuda_drivers.def) as
// data. No state, no I/O; the driver versions stay text ("525.60.13"): symbols/ parses them.
#pragma once
#include <cstddef>

namespace cudashim {

// One row of the table. minor < 0: the minor-version-compatibility minimum of the whole major.
struct CudaDriverRow {
  int major, minor;
  const char* driver;
};

inline constexpr CudaDriverRow kCudaDrivers[] = {
#define CUDASHIM_CUDA_MINOR_COMPAT(MAJOR, DRIVER) {MAJOR, -1, DRIVER},
#define CUDASHIM_CUDA_TOOLKIT_DRIVER(MAJOR, MINOR, DRIVER) {MAJOR, MINOR, DRIVER},
#include "catalog/cuda_drivers.def"
};

// Returns the oldest driver a CUDA `major` runtime runs on (minor-version compatibility), or
// nullptr for a major the table does not know.
inline const char* cuda_minor_compat_driver(int major) {
  for (const auto& r : kCudaDrivers)
    if (r.major == major && r.minor < 0) return r.driver;
  return nullptr;
}

// Returns the toolkit driver of CUDA major.minor (every feature of that release), or nullptr for a
// release the table does not list (never a guess from a neighbouring release).
inline const char* cuda_toolkit_driver(int major, int minor) {
  for (const auto& r : kCudaDrivers)
    if (r.major == major && r.minor == minor && minor >= 0) return r.driver;
  return nullptr;
}

}  // namespace cudashim
