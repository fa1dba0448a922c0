// Versioned-symbol shortfalls against the provider the loader picks, each scenario checked
// against the real loader (dlopen RTLD_NOW in a child process) on the same files.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "symbols/loader_search.h"
#include "symbols/version_check.h"
#include "tests/unit/symbols_test_support.h"

using namespace cudashim::symbols;
using namespace symbols_test;

namespace {

// Builds `dir/<soname>` from `source` with the version script `map` ("" = unversioned).
fs::path build_versioned(const fs::path& dir, const std::string& soname, const std::string& source, const std::string& map,
                         const std::string& flags = "") {
  fs::create_directories(dir);
  const std::string stem = soname.substr(0, soname.find('.'));
  write_text(dir / (stem + ".c"), source);
  std::string script;
  if (!map.empty()) {
    write_text(dir / (stem + ".map"), map);
    script = " -Wl,--version-script=" + q(dir / (stem + ".map"));
  }
  const fs::path lib = dir / soname;
  run("cc -shared -fPIC -o " + q(lib) + " " + q(dir / (stem + ".c")) + " -Wl,-soname," + soname + script + " " + flags);
  return lib;
}

// The real loader's verdict on dlopen(lib, RTLD_NOW) with `llp` as LD_LIBRARY_PATH: "ok" or dlerror().
std::string real_dlopen(const TempDir& t, const fs::path& lib, const std::string& llp) {
  const fs::path prog = t / "dlopen_now";
  if (!fs::exists(prog)) {
    write_text(t / "dlopen_now.c",
               "#include <dlfcn.h>\n#include <stdio.h>\nint main(int c, char** v) { (void)c; void* h = dlopen(v[1], RTLD_NOW);"
               " puts(h ? \"ok\" : dlerror()); return h ? 0 : 1; }\n");
    run("cc -o " + q(prog) + " " + q(t / "dlopen_now.c") + " -ldl");
  }
  std::string cmd = "env -u LD_PRELOAD " + (llp.empty() ? std::string("-u LD_LIBRARY_PATH") : "LD_LIBRARY_PATH=" + q(llp)) +
                    " " + q(prog) + " " + q(lib) + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  pclose(pipe);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::vector<VersionShortfall> shortfalls_of(const fs::path& lib, const std::string& llp) {
  SearchEnv env;
  env.ld_library_path = llp;
  auto cache = read_ld_cache();
  if (cache.ok()) env.cache = std::move(cache).value();
  auto tree = resolve_tree(lib.string(), env);
  INFO(tree.error());
  REQUIRE(tree.ok());
  return check_versions_in_tree(tree.value(), 0);
}

// A fake nvJitLink: entry points whose names carry the API level, in one version node.
const char* const kJitOld = "int __nvJitLinkAddData_12_1(void) { return 1; }\n";
const char* const kJitNew = "int __nvJitLinkAddData_12_1(void) { return 1; }\nint __nvJitLinkAddData_12_3(void) { return 3; }\n";
const char* const kJitMapOld = "libjit.so.1 { global: __nvJitLinkAddData_12_1; local: *; };\n";
const char* const kJitMapNew = "libjit.so.1 { global: __nvJitLinkAddData_12_1; __nvJitLinkAddData_12_3; local: *; };\n";
const char* const kUser = "int __nvJitLinkAddData_12_3(void);\nint sparse_go(void) { return __nvJitLinkAddData_12_3(); }\n";

}  // namespace

TEST_CASE("version check: the cuSPARSE/nvJitLink shortfall, predicted and confirmed", "[versions]") {
  TempDir t;
  build_versioned(t / "old", "libjit.so.1", kJitOld, kJitMapOld);
  build_versioned(t / "new", "libjit.so.1", kJitNew, kJitMapNew);
  // libsparse is built against the new one and finds it through its RUNPATH, like the wheel.
  const fs::path user = build_versioned(t / "sparse", "libsparse.so.1", kUser, "",
                                        "-L" + q(t / "new") + " -l:libjit.so.1 -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/../new'");

  SECTION("an old copy first on LD_LIBRARY_PATH: the missing symbol, the file and why") {
    const std::string llp = (t / "old").string();
    auto found = shortfalls_of(user, llp);
    REQUIRE(found.size() == 1);
    const VersionShortfall& s = found[0];
    CHECK(s.kind == ShortfallKind::missing_symbol);
    CHECK(s.symbol == "__nvJitLinkAddData_12_3");
    CHECK(s.version == "libjit.so.1");
    CHECK(s.provider == (t / "old" / "libjit.so.1").string());
    CHECK(s.resolution.reason == SearchReason::ld_library_path);
    CHECK(s.is_function);
    CHECK(s.note.find("needs nvJitLink >= 12.3") != std::string::npos);
    CHECK(s.note.find("provides API level 12.1") != std::string::npos);
    CHECK(describe(s) == "undefined symbol: __nvJitLinkAddData_12_3, version libjit.so.1");
    const std::string real = real_dlopen(t, user, llp);
    CHECK(real.find(describe(s)) != std::string::npos);
  }
  SECTION("the right copy (through RUNPATH): clean, and the real loader agrees") {
    CHECK(shortfalls_of(user, "").empty());
    CHECK(real_dlopen(t, user, "") == "ok");
  }
}

TEST_CASE("version check: a missing version node fails the load before any symbol", "[versions]") {
  TempDir t;
  const char* src = "int vfun(void) { return 1; }\n";
  build_versioned(t / "old", "libv.so.1", src, "V_1.0 { global: vfun; local: *; };\n");
  build_versioned(t / "new", "libv.so.1", "int vfun1(void) { return 1; }\nint vfun2(void) { return 2; }\n"
                  "__asm__(\".symver vfun1,vfun@V_1.0\");\n__asm__(\".symver vfun2,vfun@@V_2.0\");\n",
                  "V_1.0 { global: vfun; local: *; };\nV_2.0 { global: vfun; } V_1.0;\n");
  const fs::path user = build_versioned(t / "u", "libu.so.1", "int vfun(void);\nint u(void) { return vfun(); }\n", "",
                                        "-L" + q(t / "new") + " -l:libv.so.1");
  const std::string llp = (t / "old").string();
  auto found = shortfalls_of(user, llp);
  REQUIRE(found.size() == 1);  // the symbol vfun@V_2.0 is not reported again
  CHECK(found[0].kind == ShortfallKind::missing_version);
  CHECK(found[0].version == "V_2.0");
  CHECK(found[0].needed_file == "libv.so.1");
  CHECK(found[0].provider == (t / "old" / "libv.so.1").string());
  const std::string real = real_dlopen(t, user, llp);
  CHECK(real.find("version `V_2.0' not found") != std::string::npos);
  CHECK(real.find(describe(found[0]).substr(0, 30)) != std::string::npos);

  SECTION("a provider with no symbol versions at all: glibc aborts on the first versioned lookup") {
    const fs::path plain = t / "plain";
    build_versioned(plain, "libv.so.1", src, "");
    auto unversioned = shortfalls_of(user, plain.string());
    REQUIRE(unversioned.size() == 1);
    CHECK(unversioned[0].kind == ShortfallKind::missing_version);
    CHECK(unversioned[0].note.find("has no symbol versions at all") != std::string::npos);
    const std::string real = real_dlopen(t, user, plain.string());
    INFO(real);
    CHECK(real != "ok");
  }
  SECTION("a provider the loader cannot find") {
    auto missing = shortfalls_of(user, "");
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].kind == ShortfallKind::provider_not_found);
    CHECK(missing[0].provider.empty());
    CHECK(real_dlopen(t, user, "").find("libv.so.1: cannot open shared object file") != std::string::npos);
  }
}

TEST_CASE("version check: nvJitLink API levels from names", "[versions]") {
  CHECK(nvjitlink_api_level("__nvJitLinkAddData_12_1") == ApiLevel{12, 1});
  CHECK(nvjitlink_api_level("__nvJitLinkGetLinkedCubinSize_13_0") == ApiLevel{13, 0});
  CHECK(nvjitlink_api_level("nvJitLinkAddData") == std::nullopt);
  CHECK(nvjitlink_api_level("__nvJitLinkAddData") == std::nullopt);
  CHECK(nvjitlink_api_level("__nvJitLink_x_1") == std::nullopt);
  CHECK(nvjitlink_api_level("__nvJitLinkA_12_") == std::nullopt);
}
