// host_framework.cpp: the path rule of policy/host_framework.h, over catalog/python_packages.def.
#include "policy/host_framework.h"

#include "catalog/findings.h"
#include "catalog/python_packages.h"
#include "policy/user_frame.h"

namespace cudashim::policy {

bool is_array_library(const char* pkg) {
  const PythonPackage* p = python_package(pkg);
  return p != nullptr && p->role == PackageRole::array;
}

bool is_host_framework(const char* pkg) {
  const PythonPackage* p = python_package(pkg);
  return p != nullptr && p->role == PackageRole::host;
}

int helper_frame_in(const recorder::PyFrameText* frames, int user) {
  for (int i = 0; i < user; ++i) {
    char pkg[64];
    framework_of(frames[i].file, pkg, sizeof pkg);
    if (pkg[0] != '\0' && frame_owner(frames[i].file) == FrameOwner::framework && !is_array_library(pkg) &&
        !is_host_framework(pkg))
      return i;
  }
  return -1;
}

int helper_frame(const recorder::CallSite& s) {
  const int user = user_frame_in(s.py, s.py_depth);
  return host_frame_in(s.py, user) >= 0 ? -1 : helper_frame_in(s.py, user);
}

int host_frame_in(const recorder::PyFrameText* frames, int user) {
  for (int i = user - 1; i >= 0; --i) {
    char pkg[64];
    framework_of(frames[i].file, pkg, sizeof pkg);
    // framework_of names packages under site-packages only: the standard library and
    // frozen modules are nobody's framework.
    if (pkg[0] != '\0' && frame_owner(frames[i].file) == FrameOwner::framework && is_host_framework(pkg)) return i;
  }
  return -1;
}

std::string host_framework(const recorder::CallSite& s) {
  const int user = user_frame_in(s.py, s.py_depth);
  const int host = host_frame_in(s.py, user);
  return host < 0 ? std::string() : framework_of(s.py[host].file);
}

const char* framework_fix(const std::string& framework) {
  const PythonPackage* p = python_package(framework.c_str());
  return p != nullptr && p->fix[0] != '\0' ? p->fix : finding_info(FindingId::inside_framework).fix;
}

}  // namespace cudashim::policy
