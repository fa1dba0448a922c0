// python_packages.h: the installed Python packages a finding knows by name (python_packages.def):
// array libraries, whose syncs reached from the user's line are the user's, and host
// frameworks, whose are their own. No state, no I/O.
#pragma once
#include <cstring>

namespace cudashim {

enum class PackageRole : unsigned char { array, host };

struct PythonPackage {
  const char* name;
  PackageRole role;
  const char* fix;  // a host framework's fix, "" for the generic one
};

inline constexpr PythonPackage kPythonPackages[] = {
#define CUDASHIM_PACKAGE(NAME, ROLE, FIX) {#NAME, PackageRole::ROLE, FIX},
#include "catalog/python_packages.def"
#undef CUDASHIM_PACKAGE
};

// Returns the row of the top-level package `name`, nullptr when none has it. No allocation.
inline const PythonPackage* python_package(const char* name) {
  for (const PythonPackage& p : kPythonPackages)
    if (std::strcmp(p.name, name) == 0) return &p;
  return nullptr;
}

}  // namespace cudashim
