// frameworks.cpp: the report's "frameworks" section: torch, JAX and CuPy as their installed
// metadata describes them (symbols/python_frameworks.h), for each one this process loaded a
// native library of (a file under its package folder: torch/lib/libtorch_cuda.so,
// jaxlib/..., cupy/...). Read at report time from the files beside the loaded libraries.
#include <string>
#include <vector>

#include "report/sections/sections.h"
#include "symbols/python_frameworks.h"
#include "symbols/walk_objects.h"

namespace cudashim::report {
namespace {

// The package folders whose loaded files mark a framework as in use.
struct Marker {
  const char* framework;
  const char* folders[3];
};
constexpr Marker kMarkers[] = {
    {"torch", {"/torch/", nullptr, nullptr}},
    {"jax", {"/jaxlib/", "/jax_plugins/", "/jax_cuda"}},
    {"cupy", {"/cupy/", "/cupy_backends/", nullptr}},
};

}  // namespace

void write_frameworks(JsonWriter& w, const ReportContext&) {
  const std::vector<std::string> loaded = symbols::loaded_object_paths();
  std::vector<std::string> in_use;  // framework names, and one loaded file of each
  std::vector<std::string> paths;
  for (const Marker& m : kMarkers)
    for (const std::string& p : loaded) {
      bool hit = false;
      for (const char* f : m.folders) hit = hit || (f != nullptr && p.find(f) != std::string::npos);
      if (!hit) continue;
      in_use.push_back(m.framework), paths.push_back(p);
      break;
    }
  auto a = w.array();
  if (paths.empty()) return;
  std::vector<std::string> seen;
  for (const symbols::FrameworkInfo& f : symbols::find_frameworks(paths)) {
    bool used = false;
    for (const std::string& n : in_use) used = used || n == f.name;
    const std::string key = f.name + "|" + f.site_packages;
    bool dup = false;
    for (const std::string& s : seen) dup = dup || s == key;
    if (!used || dup) continue;
    seen.push_back(key);
    auto o = w.object();
    w.member("name", f.name);
    w.member("version", f.version);
    w.member("cuda", f.cuda);
    w.member("site_packages", f.site_packages);
  }
}

}  // namespace cudashim::report
