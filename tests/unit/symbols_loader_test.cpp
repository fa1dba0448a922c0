// The loader's search, on tiny ELF scenarios each test builds with cc, checked against
// what glibc's own ld.so picks for the same files (LD_TRACE_LOADED_OBJECTS, as ldd does).
#include <elf.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <string>

#include "symbols/loader_search.h"
#include "tests/unit/symbols_test_support.h"

using namespace cudashim::symbols;
using namespace symbols_test;

namespace {

// Builds lib<name>.so (soname lib<name>.so) in `dir` from `source`, with extra linker flags.
fs::path build_lib(const fs::path& dir, const std::string& name, const std::string& source, const std::string& flags = "") {
  fs::create_directories(dir);
  const fs::path src = dir / (name + ".c");
  write_text(src, source);
  const fs::path lib = dir / ("lib" + name + ".so");
  run("cc -shared -fPIC -o " + q(lib) + " " + q(src) + " -Wl,-soname,lib" + name + ".so " + flags);
  return lib;
}

// Builds an executable `dir/name` that needs the listed libraries (linked from `link_dirs`).
fs::path build_exe(const fs::path& dir, const std::string& name, const std::string& source, const std::string& flags) {
  fs::create_directories(dir);
  const fs::path src = dir / (name + ".c");
  write_text(src, source);
  const fs::path exe = dir / name;
  run("cc -o " + q(exe) + " " + q(src) + " " + flags);
  return exe;
}

ElfFacts facts_of(const fs::path& p) {
  auto r = read_elf(p.string());
  INFO(r.error());
  REQUIRE(r.ok());
  return std::move(r).value();
}

// What the real ld.so maps for `exe`: soname -> path, from LD_TRACE_LOADED_OBJECTS=1
// ("" for "not found"); its whole output goes to `raw` when given.
std::map<std::string, std::string> real_loader(const fs::path& exe, const std::string& ld_library_path,
                                               std::string* raw = nullptr) {
  std::string cmd = "env -u LD_PRELOAD ";
  cmd += ld_library_path.empty() ? "-u LD_LIBRARY_PATH " : "LD_LIBRARY_PATH=" + q(ld_library_path) + " ";
  cmd += "LD_TRACE_LOADED_OBJECTS=1 " + q(exe) + " 2>&1";
  std::map<std::string, std::string> out;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char line[4096];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::string s(line);
    if (raw != nullptr) *raw += s;
    const auto arrow = s.find(" => ");
    if (arrow == std::string::npos) continue;
    std::string name = s.substr(0, arrow);
    name.erase(0, name.find_first_not_of(" \t"));
    std::string path = s.substr(arrow + 4);
    path = path.substr(0, path.find(" ("));
    if (path.rfind("not found", 0) == 0) path = "";
    out[name] = path;
  }
  pclose(pipe);
  return out;
}

const char* const kDepA = "int dep_which(void) { return 1; }\n";
const char* const kDepB = "int dep_which(void) { return 2; }\n";
const char* const kMain = "int dep_which(void);\nint main(void) { return dep_which(); }\n";
const char* const kMidSrc = "int dep_which(void);\nint mid_call(void) { return dep_which(); }\n";

SearchEnv bare_env(const std::string& llp = "") {
  SearchEnv env;
  env.ld_library_path = llp;
  env.default_dirs.clear();  // only what the test builds is searched...
  return env;
}

}  // namespace

TEST_CASE("loader search: the order glibc uses, with the reason for every pick", "[loader]") {
  TempDir t;
  const fs::path a = t / "a", b = t / "b";
  build_lib(a, "dep", kDepA);
  build_lib(b, "dep", kDepB);

  SECTION("DT_RPATH beats LD_LIBRARY_PATH") {
    const fs::path exe = build_exe(t / "bin", "m", kMain, "-L" + q(a) + " -ldep -Wl,--disable-new-dtags -Wl,-rpath," + a.string());
    const ElfFacts f = facts_of(exe);
    REQUIRE(!f.rpath.empty());
    REQUIRE(f.runpath.empty());
    Resolution r = find_library("libdep.so", f, {}, bare_env(b.string()));
    CHECK(r.path == (a / "libdep.so").string());
    CHECK(r.reason == SearchReason::rpath);
    CHECK(r.from == exe.string());
    CHECK(real_loader(exe, b.string())["libdep.so"] == r.path);
  }

  SECTION("LD_LIBRARY_PATH beats DT_RUNPATH, which is used when it is unset") {
    const fs::path exe = build_exe(t / "bin", "m", kMain, "-L" + q(a) + " -ldep -Wl,--enable-new-dtags -Wl,-rpath," + a.string());
    const ElfFacts f = facts_of(exe);
    REQUIRE(!f.runpath.empty());
    Resolution with = find_library("libdep.so", f, {}, bare_env(b.string()));
    CHECK(with.path == (b / "libdep.so").string());
    CHECK(with.reason == SearchReason::ld_library_path);
    CHECK(real_loader(exe, b.string())["libdep.so"] == with.path);

    Resolution without = find_library("libdep.so", f, {}, bare_env());
    CHECK(without.path == (a / "libdep.so").string());
    CHECK(without.reason == SearchReason::runpath);
    CHECK(real_loader(exe, "")["libdep.so"] == without.path);
  }

  SECTION("$ORIGIN is the needing object's folder; ${ORIGIN}, $LIB and $PLATFORM expand too") {
    const fs::path exe = build_exe(t / "bin", "m", kMain, "-L" + q(b) + " -ldep -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/../b'");
    const ElfFacts f = facts_of(exe);
    CHECK(f.runpath == "$ORIGIN/../b");
    Resolution r = find_library("libdep.so", f, {}, bare_env());
    CHECK(r.reason == SearchReason::runpath);
    CHECK(fs::equivalent(r.path, b / "libdep.so"));
    CHECK(fs::equivalent(real_loader(exe, "")["libdep.so"], r.path));

    SearchEnv env = bare_env();
    CHECK(expand_tokens("${ORIGIN}/x:$LIB/$PLATFORM", "/o", env) == "/o/x:lib/x86_64-linux-gnu/x86_64");
    CHECK(expand_tokens("$ORIGINAL", "/o", env) == std::nullopt);  // not $ORIGIN: the element is dropped
  }

  SECTION("DT_RPATH of the loader chain: used only when the needing object has no DT_RUNPATH") {
    // bin/m (RPATH a:mid) -> libmid.so (no paths) -> libdep.so: found through m's RPATH.
    build_lib(t / "mid", "mid", kMidSrc, "-L" + q(a) + " -ldep");
    const fs::path exe = build_exe(t / "bin", "m", "int mid_call(void);\nint main(void) { return mid_call(); }\n",
                                   "-L" + q(t / "mid") + " -lmid -Wl,--disable-new-dtags -Wl,-rpath," + a.string() + ":" +
                                       (t / "mid").string());
    auto tree = resolve_tree(exe.string(), bare_env());
    REQUIRE(tree.ok());
    const int dep = tree.value().find("libdep.so");
    REQUIRE(dep > 0);
    const Resolution& r = tree.value().objects[dep].resolution;
    CHECK(r.reason == SearchReason::rpath);
    CHECK(r.from == exe.string());
    CHECK(r.path == (a / "libdep.so").string());
    CHECK(real_loader(exe, "")["libdep.so"] == r.path);

    // The same, but libmid has a DT_RUNPATH to b: the chain's RPATH is not used any more.
    build_lib(t / "mid", "mid", kMidSrc, "-L" + q(a) + " -ldep -Wl,--enable-new-dtags -Wl,-rpath," + b.string());
    auto tree2 = resolve_tree(exe.string(), bare_env());
    REQUIRE(tree2.ok());
    const Resolution& r2 = tree2.value().objects[tree2.value().find("libdep.so")].resolution;
    CHECK(r2.reason == SearchReason::runpath);
    CHECK(r2.path == (b / "libdep.so").string());
    CHECK(real_loader(exe, "")["libdep.so"] == r2.path);
    // ...and the search tried m's RPATH folders never, libmid's RUNPATH first.
    CHECK(r2.tried.front().reason == SearchReason::runpath);
  }

  SECTION("breadth-first, first loaded wins: a later needer gets the copy already loaded") {
    // m needs libmid then libdep (RPATH a); libmid's RUNPATH says b, but libdep is loaded
    // once, from a, before libmid's own needs are looked at.
    build_lib(t / "mid", "mid", kMidSrc, "-L" + q(b) + " -ldep -Wl,--enable-new-dtags -Wl,-rpath," + b.string());
    const fs::path exe = build_exe(t / "bin", "m", "int mid_call(void);\nint dep_which(void);\nint main(void) { return mid_call() + dep_which(); }\n",
                                   "-L" + q(t / "mid") + " -L" + q(a) + " -Wl,--no-as-needed -lmid -ldep -Wl,--disable-new-dtags -Wl,-rpath," +
                                       a.string() + ":" + (t / "mid").string());
    auto tree = resolve_tree(exe.string(), bare_env());
    REQUIRE(tree.ok());
    const auto& objs = tree.value().objects;
    const int dep = tree.value().find("libdep.so");
    REQUIRE(dep > 0);
    CHECK(objs[dep].parent == 0);  // loaded for m itself
    CHECK(objs[dep].resolution.path == (a / "libdep.so").string());
    CHECK(std::count_if(objs.begin(), objs.end(), [](const LoadedObject& o) { return o.name == "libdep.so"; }) == 1);
    const int mid = tree.value().find("libmid.so");
    REQUIRE(mid > 0);
    REQUIRE(objs[mid].needed.size() == 1);
    CHECK(objs[mid].needed[0].reason == SearchReason::already_loaded);
    CHECK(objs[mid].needed[0].path == (a / "libdep.so").string());
    REQUIRE(objs[0].needed.size() == 3);  // libmid.so, libdep.so, libc.so.6
    CHECK(objs[0].needed[0].name == "libmid.so");
    CHECK(objs[0].needed[1].name == "libdep.so");
    CHECK(objs[0].needed[1].reason == SearchReason::rpath);
    CHECK(real_loader(exe, "")["libdep.so"] == objs[dep].resolution.path);
  }

  SECTION("not found: every place tried is listed, in order, with its reason") {
    const fs::path exe = build_exe(t / "bin", "m", kMain, "-L" + q(a) + " -ldep -Wl,--enable-new-dtags -Wl,-rpath,/nonexistent/rp");
    SearchEnv env = bare_env("/nonexistent/llp");
    env.default_dirs = {"/nonexistent/def"};
    Resolution r = find_library("libdep.so", facts_of(exe), {}, env);
    CHECK_FALSE(r.found());
    CHECK(r.reason == SearchReason::not_found);
    REQUIRE(r.tried.size() == 3);
    CHECK(r.tried[0].dir == "/nonexistent/llp");
    CHECK(r.tried[0].reason == SearchReason::ld_library_path);
    CHECK(r.tried[1].dir == "/nonexistent/rp");
    CHECK(r.tried[1].reason == SearchReason::runpath);
    CHECK(r.tried[2].dir == "/nonexistent/def");
    CHECK(r.tried[2].reason == SearchReason::default_path);
    CHECK(r.tried[2].outcome == "no such file");
  }

  SECTION("a candidate of the other ELF class is skipped; one that is not ELF ends the search") {
    const fs::path junk = t / "junk", cls32 = t / "cls32";
    fs::create_directories(junk);
    fs::create_directories(cls32);
    write_text(junk / "libdep.so", "not a library, but long enough to hold an ELF header: 0123456789abcdef0123456789");
    auto bytes = read_bytes(a / "libdep.so");
    bytes[EI_CLASS] = ELFCLASS32;
    write_bytes(cls32 / "libdep.so", bytes);
    const fs::path exe = build_exe(t / "bin", "m", kMain, "-L" + q(a) + " -ldep");
    const std::string llp = cls32.string() + ":" + b.string();
    Resolution r = find_library("libdep.so", facts_of(exe), {}, bare_env(llp));
    CHECK(r.path == (b / "libdep.so").string());
    REQUIRE(r.tried.size() == 2);
    CHECK(r.tried[0].outcome == "skipped: ELFCLASS32, need ELFCLASS64");
    CHECK(r.tried[1].outcome == "found");
    CHECK(real_loader(exe, llp)["libdep.so"] == r.path);

    const std::string bad = junk.string() + ":" + b.string();
    Resolution stop = find_library("libdep.so", facts_of(exe), {}, bare_env(bad));
    CHECK_FALSE(stop.found());
    CHECK(stop.tried.size() == 1);
    CHECK(stop.error == (junk / "libdep.so").string() + ": invalid ELF header");
    std::string raw;
    real_loader(exe, bad, &raw);
    INFO(raw);
    CHECK(raw.find("invalid ELF header") != std::string::npos);
  }

  SECTION("glibc-hwcaps subfolders of a folder come before the folder itself") {
    const fs::path v2 = a / "glibc-hwcaps" / "x86-64-v2";
    fs::create_directories(v2);
    fs::copy_file(b / "libdep.so", v2 / "libdep.so");
    const fs::path exe = build_exe(t / "bin", "m", kMain, "-L" + q(a) + " -ldep");
    Resolution r = find_library("libdep.so", facts_of(exe), {}, bare_env(a.string()));
    CHECK(r.path == (v2 / "libdep.so").string());
    CHECK(r.reason == SearchReason::ld_library_path);
  }

  SECTION("the cache comes after DT_RUNPATH, the default folders last") {
    const fs::path exe = build_exe(t / "bin", "m", kMain, "-L" + q(a) + " -ldep");
    SearchEnv env = bare_env();
    env.cache = LdCache{"fake.cache", {LdCacheEntry{"libdep.so", (b / "libdep.so").string(), 0x0303, 0}}};
    env.default_dirs = {a.string()};
    Resolution r = find_library("libdep.so", facts_of(exe), {}, env);
    CHECK(r.reason == SearchReason::ld_so_cache);
    CHECK(r.path == (b / "libdep.so").string());
    env.cache->entries.clear();
    Resolution d = find_library("libdep.so", facts_of(exe), {}, env);
    CHECK(d.reason == SearchReason::default_path);
    CHECK(d.path == (a / "libdep.so").string());
    CHECK(d.tried.front().outcome == "no entry");
  }

  SECTION("a name with a slash is opened as it is") {
    const fs::path exe = build_exe(t / "bin", "m", kMain, "-L" + q(a) + " -ldep");
    Resolution r = find_library((b / "libdep.so").string(), facts_of(exe), {}, bare_env(a.string()));
    CHECK(r.reason == SearchReason::direct_path);
    CHECK(r.path == (b / "libdep.so").string());
  }
}

TEST_CASE("loader search: bad input is a result, never a crash", "[loader]") {
  ElfFacts nothing;
  nothing.path = "relative/thing";
  nothing.elf_class = 64;
  nothing.machine = EM_X86_64;
  nothing.rpath = "$BOGUS:::";
  SearchEnv env;
  env.ld_library_path = ":::";
  env.default_dirs = {"/nonexistent"};
  Resolution r = find_library("libnothing-at-all.so.99", nothing, {nullptr}, env);
  CHECK_FALSE(r.found());
  CHECK(r.tried.front().outcome == "skipped: unknown $token");
  CHECK_FALSE(find_library("", nothing, {}, env).found());
  auto tree = resolve_tree("/nonexistent/file.so", env);
  REQUIRE_FALSE(tree.ok());
  CHECK(tree.error().find("/nonexistent/file.so") != std::string::npos);
}
