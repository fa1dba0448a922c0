// Helpers shared by the doctor_*_test.cpp files: tiny stand-in libraries built with cc, a search
// environment with nothing of the host in it, findings by id.
#pragma once
#include <string>
#include <vector>

#include "tests/unit/symbols_test_support.h"
#include "tools/doctor.h"

namespace doctor_test {
using namespace symbols_test;
using cudashim::Finding;
using cudashim::symbols::SearchEnv;
using cudashim::tools::DoctorReport;

// Builds `dir/<soname>` (SONAME soname) from `source`, with optional version script and flags.
inline fs::path fake_lib(const fs::path& dir, const std::string& soname, const std::string& source, const std::string& map = "",
                  const std::string& flags = "") {
  fs::create_directories(dir);
  static int n = 0;
  const fs::path src = dir / ("src" + std::to_string(++n) + ".c");
  write_text(src, source);
  std::string script;
  if (!map.empty()) {
    write_text(dir / (soname + ".map"), map);
    script = " -Wl,--version-script=" + q(dir / (soname + ".map"));
  }
  const fs::path lib = dir / soname;
  run("cc -shared -fPIC -o " + q(lib) + " " + q(src) + " -Wl,-soname," + soname + script + " " + flags);
  return lib;
}

// A search environment with nothing of the host in it: no cache, no default folders.
inline SearchEnv bare(const std::string& llp = "") {
  SearchEnv env;
  env.ld_library_path = llp;
  env.default_dirs.clear();
  return env;
}

// The findings of `r` whose id is `id`, in the report's order.
inline std::vector<const cudashim::tools::DoctorFinding*> with_id(const DoctorReport& r, const std::string& id) {
  std::vector<const cudashim::tools::DoctorFinding*> out;
  for (const auto& f : r.findings)
    if (id == f.info().name) out.push_back(&f);
  return out;
}

// The message and every evidence line, one a line.
inline std::string all_evidence(const Finding& f) {
  std::string s = f.message + "\n";
  for (const auto& e : f.evidence) s += e + "\n";
  return s;
}

}  // namespace doctor_test
