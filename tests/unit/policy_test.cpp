// policy_test.cpp: the settings table, policy files, locks, and admission.
#include <catch2/catch.hpp>
#include <clocale>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "policy/admission.h"
#include "policy/did_you_mean.h"
#include "policy/printable.h"
#include "policy/settings_load.h"
#include "policy/sync_rules.h"
#include "recorder/recorder.h"

using namespace cudashim;
using namespace cudashim::policy;

namespace {
std::map<std::string, std::string> g_env;
const char* fake_getenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

// A policy file written for one test; removed at scope exit.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char tmpl[] = "/tmp/cudashim-policy-XXXXXX";
    const int fd = mkstemp(tmpl);
    REQUIRE(fd >= 0);
    path = tmpl;
    REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    close(fd);
  }
  ~TempFile() { unlink(path.c_str()); }
};

LoadResult load(const std::string& admin = "") { return load_policy(fake_getenv, admin); }
}  // namespace

TEST_CASE("defaults come from the table", "[policy]") {
  g_env.clear();
  const LoadResult r = load();
  CHECK(r.errors.empty());
  CHECK(r.warnings.empty());
  CHECK(r.policy.settings.out == ".");
  CHECK(r.policy.settings.report);
  CHECK_FALSE(r.policy.settings.mem_cap.set());
  CHECK(r.policy.settings.managed == Managed::allow);
  CHECK(r.policy.settings.log_level == LogThreshold::warn);
  CHECK(r.policy.origin[static_cast<int>(Setting::OUT)] == "default");
}

TEST_CASE("memory sizes: units, fractions, percentages, garbage", "[policy]") {
  MemSize m;
  REQUIRE(parse_memsize("8GiB", m));
  CHECK(m.bytes == 8ull << 30);
  REQUIRE(parse_memsize("512 MiB", m));
  CHECK(m.bytes == 512ull << 20);
  REQUIRE(parse_memsize("1.5e9", m));
  CHECK(m.bytes == 1500000000ull);
  REQUIRE(parse_memsize("1073741824", m));
  CHECK(m.bytes == 1ull << 30);
  REQUIRE(parse_memsize("0.5", m));
  CHECK(m.fraction == 0.5);
  CHECK(m.resolve(1000) == 500);
  REQUIRE(parse_memsize("25%", m));
  CHECK(m.fraction == 0.25);
  for (const char* bad : {"", "lots", "-1GiB", "8 parsecs", "nan", "inf", "0", "200%", "1e40", "8GiBs", "8 Gig", "8iB",
                          "8PB", "8E"}) {
    INFO(bad);
    CHECK_FALSE(parse_memsize(bad, m));
  }
}

TEST_CASE("memory sizes read the same digits whatever LC_NUMERIC the program set", "[policy]") {
  // A program may set a locale whose decimal separator is ',' before its first CUDA call.
  // A bare machine has only C: compile de_DE into a folder of our own (LOCPATH) when needed.
  const std::string before = std::setlocale(LC_NUMERIC, nullptr);
  char dir[] = "/tmp/cudashim-locale-XXXXXX";
  bool made = false;
  if (std::setlocale(LC_NUMERIC, "de_DE.UTF-8") == nullptr) {
    made = mkdtemp(dir) != nullptr;
    if (made &&
        std::system(("localedef -i de_DE -f UTF-8 " + std::string(dir) + "/de_DE.UTF-8 >/dev/null 2>&1").c_str()) == 0) {
      setenv("LOCPATH", dir, 1);
      std::setlocale(LC_NUMERIC, "de_DE.UTF-8");
    }
  }
  const bool comma = std::localeconv()->decimal_point[0] == ',';
  if (!comma) WARN("no locale with a decimal comma (localedef -i de_DE failed): only the C locale's digits are checked");
  if (comma) CHECK(std::strtod("1.5", nullptr) == 1.0);  // what strtod does there: the bug this guards against
  MemSize m;
  CHECK(parse_memsize("1.5GiB", m));
  CHECK(m.bytes == 3ull << 29);
  CHECK(parse_memsize("0.25", m));
  CHECK(m.fraction == 0.25);
  CHECK(parse_memsize("+2KiB", m));
  CHECK(m.bytes == 2048);
  CHECK_FALSE(parse_memsize("1,5GiB", m));
  std::setlocale(LC_NUMERIC, before.c_str());
  unsetenv("LOCPATH");
  if (made) CHECK(std::system(("rm -rf " + std::string(dir)).c_str()) == 0);
}

TEST_CASE("memory units: B, decimal KB..TB, binary KiB..TiB and K..T, in any case", "[policy]") {
  // "8gib" turned the cap off (issue 21): every unit is matched without case.
  const struct {
    const char* text;
    uint64_t bytes;
  } cases[] = {
      {"8B", 8},
      {"8b", 8},
      {"8KB", 8000},
      {"8kb", 8000},
      {"8MB", 8000000},
      {"8mb", 8000000},
      {"8GB", 8000000000ull},
      {"8gb", 8000000000ull},
      {"8TB", 8000000000000ull},
      {"8tb", 8000000000000ull},
      {"8KiB", 8ull << 10},
      {"8kib", 8ull << 10},
      {"8MiB", 8ull << 20},
      {"8MIB", 8ull << 20},
      {"8GiB", 8ull << 30},
      {"8gib", 8ull << 30},
      {"8GIB", 8ull << 30},
      {"8TiB", 8ull << 40},
      {"8tib", 8ull << 40},
      {"8K", 8ull << 10},
      {"8k", 8ull << 10},
      {"8M", 8ull << 20},
      {"8m", 8ull << 20},
      {"8G", 8ull << 30},
      {"8g", 8ull << 30},
      {"8T", 8ull << 40},
      {"8t", 8ull << 40},
      {"1.5 gib", 3ull << 29},
      {"2_048 MiB", 2ull << 30},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    MemSize m;
    REQUIRE(parse_memsize(c.text, m));
    CHECK(m.bytes == c.bytes);
    CHECK(m.fraction == 0);
  }
  // Every unit of the table is one of those, so docs/options.md lists what is tested.
  CHECK(std::size(kMemUnits) == 13);
}

TEST_CASE("a bad value of an enforcement setting follows policy.on_invalid; it never turns the limit off", "[policy]") {
  SECTION("on_invalid = fail (the default): an error, and the stop line names the variable") {
    g_env = {{"CUDASHIM_MEM_CAP", "8gibs"}};
    const LoadResult r = load();
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].rfind("CUDASHIM_MEM_CAP='8gibs' is not valid: use a number of bytes with a unit", 0) == 0);
    CHECK(r.warnings.empty());
    CHECK(r.stop());
    CHECK(r.stop_line().rfind("invalid setting: CUDASHIM_MEM_CAP='8gibs' is not valid", 0) == 0);
    CHECK(r.stop_line().find("fix or unset CUDASHIM_MEM_CAP") != std::string::npos);
  }
  SECTION("each enforcement setting, and only those") {
    for (int i = 0; i < kSettings; ++i) {
      const SettingRow& row = kSettingRows[i];
      if (row.type == SettingType::path || row.type == SettingType::text || i == static_cast<int>(Setting::LOCKED))
        continue;  // every line is a path or a text; LOCKED is refused from the environment
      g_env = {{std::string("CUDASHIM_") + row.name, "garbage"}};
      const LoadResult r = load();
      INFO(row.name);
      CHECK(r.stop() == row.enforces());
      CHECK(r.errors.size() == (row.enforces() ? 1u : 0u));
      CHECK(r.warnings.size() == (row.enforces() ? 0u : 1u));
    }
    int enforcing = 0;
    for (const SettingRow& row : kSettingRows) enforcing += row.enforces();
    CHECK(enforcing == 5);  // cap, managed, managed guard, pool_max_cached, pool_max_block
  }
  SECTION("on_invalid = warn, from the environment or a file: one warning, the value it had stays") {
    g_env = {{"CUDASHIM_MANAGED", "dney"}, {"CUDASHIM_ON_INVALID", "warn"}};
    const LoadResult r = load();
    CHECK(r.errors.empty());
    CHECK_FALSE(r.stop());
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0] == "CUDASHIM_MANAGED: CUDASHIM_MANAGED='dney' is not valid: use allow, warn, deny; using 'allow' "
                           "(policy.on_invalid = \"warn\")");
    TempFile f("[policy]\non_invalid = \"warn\"\n[memory]\ncap = \"4GiB\"\n");
    g_env = {{"CUDASHIM_POLICY", f.path}, {"CUDASHIM_MEM_CAP", "8 gigs"}};
    const LoadResult w = load();
    CHECK_FALSE(w.stop());
    CHECK(w.policy.settings.mem_cap.bytes == 4ull << 30);  // the file's cap holds
  }
  SECTION("a file's error comes first: the stop line names the file") {
    TempFile f("[memory]\nmanaged = \"x\"\n");
    g_env = {{"CUDASHIM_POLICY", f.path}, {"CUDASHIM_MEM_CAP", "lots"}};
    const LoadResult r = load();
    REQUIRE(r.errors.size() == 2);
    CHECK(r.stop_line().rfind("invalid policy: " + f.path + ":2:11", 0) == 0);
    CHECK(r.stop_line().find("(and 1 more)") != std::string::npos);
  }
}

TEST_CASE("an unknown CUDASHIM_* variable is one warning with the closest setting", "[policy]") {
  g_env.clear();
  LoadResult r = load();
  const char* env[] = {"HOME=/root",
                       "CUDASHIM_MEMCAP=8GiB",
                       "CUDASHIM_MEM_CAP=4GiB",
                       "CUDASHIM_LIB=/opt/libcudashim.so",
                       "CUDASHIM_POLL=1",
                       "CUDASHIM_ZZZZZZZZ=1",
                       "CUDASHIM_NOEQUALS",
                       nullptr};
  warn_unknown_variables(r, env);
  REQUIRE(r.warnings.size() == 4);
  CHECK(r.warnings[0] ==
        "CUDASHIM_MEMCAP: not a cudashim setting, ignored; did you mean CUDASHIM_MEM_CAP? (`cudashim options` lists them)");
  CHECK(r.warnings[1] == "CUDASHIM_POLL: not a cudashim setting, ignored; did you mean CUDASHIM_POOL? (`cudashim options` "
                         "lists them)");
  CHECK(r.warnings[2] == "CUDASHIM_ZZZZZZZZ: not a cudashim setting, ignored (`cudashim options` lists them)");
  CHECK(r.warnings[3].rfind("CUDASHIM_NOEQUALS: not a cudashim setting", 0) == 0);
  SECTION("a block of many is bounded") {
    std::vector<std::string> many;
    for (int i = 0; i < 100; ++i) many.push_back("CUDASHIM_X" + std::to_string(i) + "=1");
    std::vector<const char*> block;
    for (const auto& m : many) block.push_back(m.c_str());
    block.push_back(nullptr);
    LoadResult b = load();
    warn_unknown_variables(b, block.data());
    REQUIRE(b.warnings.size() == kListedUnknownVariables + 1);
    CHECK(b.warnings.back() == "... and 95 more CUDASHIM_* variables that are not cudashim settings");
  }
  SECTION("nothing to say without an environment block") {
    LoadResult n = load();
    warn_unknown_variables(n, nullptr);
    CHECK(n.warnings.empty());
  }
}

TEST_CASE("did you mean: one edit-distance rule", "[policy]") {
  CHECK(edit_distance("doctr", "doctor") == 1);
  CHECK(edit_distance("jsno", "json") == 1);  // a swap of neighbours is one edit
  CHECK(edit_distance("MEMCAP", "mem_cap") == 1);
  CHECK(edit_distance("", "abc") == 3);
  const std::vector<std::string_view> commands = {"run", "report", "doctor", "hooks", "options", "findings", "help"};
  CHECK(did_you_mean("doctr", commands) == "; did you mean 'doctor'?");
  CHECK(did_you_mean("rep", commands) == "; did you mean 'report'?");  // a prefix of 3 or more
  CHECK(did_you_mean("rnu", commands) == "; did you mean 'run'?");
  CHECK(did_you_mean("xyzzy", commands).empty());
  CHECK(did_you_mean("run", commands).empty());  // not a typo
  CHECK(did_you_mean("--ouy", {"--out", "--shim", "--quiet"}) == "; did you mean '--out'?");
  CHECK(did_you_mean("poll", {"pool", "poll_x", "pol"}, "", "CUDASHIM_") == "; did you mean CUDASHIM_pool or CUDASHIM_pol?");
}

TEST_CASE("a policy file's unknown key names the closest key", "[policy]") {
  TempFile f("[memory]\npool_max_cahced = 1\nk0 = 1\n[output]\ncap = 1\n");
  g_env = {{"CUDASHIM_POLICY", f.path}};
  const LoadResult r = load();
  REQUIRE(r.errors.size() == 3);
  CHECK(r.errors[0] == f.path + ":2:19: unknown setting 'memory.pool_max_cahced'; did you mean 'memory.pool_max_cached'? "
                                "(see `cudashim options` for the list)");
  // the last part of the key is compared: a shared "memory." makes no key close
  CHECK(r.errors[1] == f.path + ":3:6: unknown setting 'memory.k0' (see `cudashim options` for the list)");
  CHECK(r.errors[2] == f.path + ":5:7: unknown setting 'output.cap'; did you mean 'memory.cap'? (see `cudashim options` "
                                "for the list)");
}

TEST_CASE("the environment overrides, and garbage falls back with a clear warning", "[policy]") {
  g_env = {{"CUDASHIM_MEM_CAP", "8GiB"}, {"CUDASHIM_MANAGED", "deny"}, {"CUDASHIM_LOG_LEVEL", "loud"},
           {"CUDASHIM_REPORT", "maybe"}};
  const LoadResult r = load();
  CHECK(r.errors.empty());
  CHECK(r.policy.settings.mem_cap.bytes == 8ull << 30);
  CHECK(r.policy.origin[static_cast<int>(Setting::MEM_CAP)] == "CUDASHIM_MEM_CAP");
  CHECK(r.policy.settings.managed == Managed::deny);
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[0] == "CUDASHIM_REPORT: CUDASHIM_REPORT='maybe' is not valid: use 1 or 0 (true/false, yes/no, "
                         "on/off); using '1'");
  CHECK(r.warnings[1].find("CUDASHIM_LOG_LEVEL='loud' is not valid: use off, error, warn, info or debug") !=
        std::string::npos);
  CHECK(r.policy.settings.log_level == LogThreshold::warn);
  // Both are refusals of the report's policy.refused: the value asked for, whence, why, what was kept.
  REQUIRE(r.policy.refused.size() == 2);
  CHECK(r.policy.refused[0].setting == Setting::REPORT);
  CHECK(r.policy.refused[0].value == "maybe");
  CHECK(r.policy.refused[0].from == "CUDASHIM_REPORT");
  CHECK(r.policy.refused[0].why == "not valid: use 1 or 0 (true/false, yes/no, on/off)");
  CHECK(r.policy.refused[0].kept == "1");
  CHECK(r.policy.refused[1].setting == Setting::LOG_LEVEL);
  CHECK(r.policy.refused[1].kept == "warn");
}

TEST_CASE("a policy file sets values; a malformed one is an error at line:column", "[policy]") {
  g_env.clear();
  SECTION("good file") {
    TempFile f("[memory]\ncap = \"6GiB\"\nmanaged = \"warn\"\n[framework]\npytorch_cuda_alloc_conf = \"expandable_segments:True\"\n");
    g_env["CUDASHIM_POLICY"] = f.path;
    const LoadResult r = load();
    CHECK(r.errors.empty());
    CHECK(r.policy.settings.mem_cap.bytes == 6ull << 30);
    CHECK(r.policy.settings.managed == Managed::warn);
    CHECK(r.policy.settings.pytorch_alloc_conf == "expandable_segments:True");
    CHECK(r.policy.origin[static_cast<int>(Setting::MEM_CAP)] == f.path + ":2:7");
  }
  SECTION("a TOML float is a fraction, even a whole one") {
    // cap = 1.0 (a float, not a string) was read as "1": a cap of one byte that denied every allocation
    TempFile f("[memory]\ncap = 1.0\n");
    g_env["CUDASHIM_POLICY"] = f.path;
    const LoadResult r = load();
    CHECK(r.errors.empty());
    CHECK(r.policy.settings.mem_cap.bytes == 0);
    CHECK(r.policy.settings.mem_cap.fraction == 1.0);
    TempFile half("[memory]\ncap = 0.5\n");
    g_env["CUDASHIM_POLICY"] = half.path;
    CHECK(load().policy.settings.mem_cap.fraction == 0.5);
  }
  SECTION("TOML syntax error") {
    TempFile f("[memory]\ncap = \"6GiB\n");
    g_env["CUDASHIM_POLICY"] = f.path;
    const LoadResult r = load();
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].rfind(f.path + ":2:", 0) == 0);
    CHECK(r.stop());
  }
  SECTION("unknown key and bad value, each at its own position") {
    TempFile f("[memory]\ncapp = \"6GiB\"\nmanaged = \"sometimes\"\n");
    g_env["CUDASHIM_POLICY"] = f.path;
    const LoadResult r = load();
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0] == f.path + ":2:8: unknown setting 'memory.capp'; did you mean 'memory.cap'? (see `cudashim "
                         "options` for the list)");
    CHECK(r.errors[1] == f.path + ":3:11: memory.managed='sometimes' is not valid: use allow, warn, deny");
    CHECK(r.stop());
  }
  SECTION("on_invalid = warn keeps the job running without the bad setting") {
    TempFile f("[policy]\non_invalid = \"warn\"\n[memory]\ncap = \"a lot\"\n");
    g_env["CUDASHIM_POLICY"] = f.path;
    const LoadResult r = load();
    REQUIRE(r.errors.size() == 1);
    CHECK_FALSE(r.stop());
    CHECK_FALSE(r.policy.settings.mem_cap.set());
  }
  SECTION("a missing file") {
    g_env["CUDASHIM_POLICY"] = "/nonexistent/policy.toml";
    const LoadResult r = load();
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].rfind("/nonexistent/policy.toml", 0) == 0);
  }
}

TEST_CASE("a policy file is a regular file of at most 64 KiB, read without blocking", "[policy]") {
  g_env.clear();
  SECTION("a FIFO (it hung every preloaded process at load)") {
    char dir[] = "/tmp/cudashim-fifo-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string fifo = std::string(dir) + "/policy.toml";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    g_env["CUDASHIM_POLICY"] = fifo;
    const LoadResult r = load();
    unlink(fifo.c_str());
    rmdir(dir);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0] == fifo + ": not a regular file (a FIFO); CUDASHIM_POLICY must name a regular TOML file of at "
                                "most 64 KiB");
    CHECK(r.stop());
  }
  SECTION("/dev/zero (it read until bad_alloc)") {
    g_env["CUDASHIM_POLICY"] = "/dev/zero";
    const LoadResult r = load();
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].rfind("/dev/zero: not a regular file (a character device); ", 0) == 0);
  }
  SECTION("a directory") {
    g_env["CUDASHIM_POLICY"] = "/tmp";
    const LoadResult r = load();
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].rfind("/tmp: not a regular file (a directory); ", 0) == 0);
  }
  SECTION("a file over 64 KiB, even of comments (parsing 1 MiB cost every process 0.1 s)") {
    TempFile f(std::string(kPolicyFileLimit, '#') + "\n");
    g_env["CUDASHIM_POLICY"] = f.path;
    const LoadResult r = load();
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0] == f.path + ": larger than 64 KiB, the limit for this file; CUDASHIM_POLICY must name a regular "
                                  "TOML file of at most 64 KiB");
  }
  SECTION("more than 256 keys and headers: not parsed (100,000 keys cost every process 0.3 s)") {
    std::string text;
    for (int i = 0; i < 200; ++i) text += "[s" + std::to_string(i) + "]\nkey = 1\n";
    TempFile f(text);
    g_env["CUDASHIM_POLICY"] = f.path;
    const LoadResult r = load();
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0] == f.path + ": holds 400 keys and section headers, more than the 256 a policy file may (there "
                                  "are " + std::to_string(kSettings) + " settings): not parsed; is this the policy file?");
    TempFile strings("[output]\ndir = \"\"\"\n" + std::string(300, '[') + "\n" + std::string(300, '=') + "\"\"\"\n");
    g_env["CUDASHIM_POLICY"] = strings.path;  // what a string holds is no entry
    const LoadResult s = load();
    REQUIRE(s.errors.size() == 1);
    CHECK(s.errors[0].find("keys and section headers") == std::string::npos);
    CHECK(s.errors[0].find("(it holds a newline)") != std::string::npos);
  }
  SECTION("an administrator file that is a directory is an error of that file") {
    const LoadResult r = load("/tmp");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].rfind("/tmp: not a regular file (a directory); a policy file is a regular TOML file", 0) == 0);
  }
}

TEST_CASE("policy messages say what is wrong, in a bounded number of lines", "[policy]") {
  g_env.clear();
  SECTION("a UTF-8 byte order mark is accepted (it was 'a non-ASCII character outside a string')") {
    TempFile f("\xEF\xBB\xBF[memory]\ncap = \"6GiB\"\n");
    g_env["CUDASHIM_POLICY"] = f.path;
    const LoadResult r = load();
    CHECK(r.errors.empty());
    CHECK(r.policy.settings.mem_cap.bytes == 6ull << 30);
    CHECK(r.policy.origin[static_cast<int>(Setting::MEM_CAP)] == f.path + ":2:7");
  }
  SECTION("a table or an array as a value is named as such (it was printed as '\\x01')") {
    TempFile f("[memory]\ncap = [1, 2]\nmanaged = { a = 1 }\n");
    g_env["CUDASHIM_POLICY"] = f.path;
    const LoadResult r = load();
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0] == f.path + ":2:7: memory.cap is an array, not a value: use a number of bytes with a unit, any "
                                  "case: B, KB/MB/GB/TB (powers of 1000), KiB/MiB/GiB/TiB or K/M/G/T (powers of "
                                  "1024), as in 8GiB, 512mb, 1.5e9; or a fraction of the device's memory (0.5 or 50%)");
    CHECK(r.errors[1] == f.path + ":3:11: memory.managed is a table, not a value: use allow, warn, deny");
    for (const auto& e : r.errors) CHECK(e.find('\x01') == std::string::npos);
  }
  SECTION("a value with a newline or over 4000 characters is not called empty") {
    g_env = {{"CUDASHIM_OUT", "/tmp/a\nb"}, {"CUDASHIM_PYTORCH_ALLOC_CONF", std::string(5000, 'x')}};
    const LoadResult r = load();
    REQUIRE(r.warnings.size() == 2);
    CHECK(r.warnings[0] == "CUDASHIM_OUT: CUDASHIM_OUT='/tmp/a\\nb' is not valid (it holds a newline): use one "
                           "non-empty line of at most 4000 characters; using '.'");
    CHECK(r.warnings[1].find("is not valid (it is 5000 characters long): use one line of at most 4000 characters") !=
          std::string::npos);
    for (const auto& w : r.warnings) CHECK(w.find("non-empty value") == std::string::npos);
  }
  SECTION("control characters of a value are escaped, never echoed (an ESC sequence drove the terminal)") {
    g_env = {{"CUDASHIM_LOG_LEVEL", "\x1b]0;pwned\x07\x1b[31mred"}};
    const LoadResult r = load();
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0] == "CUDASHIM_LOG_LEVEL: CUDASHIM_LOG_LEVEL='\\x1b]0;pwned\\x07\\x1b[31mred' is not valid: use "
                           "off, error, warn, info or debug; using 'warn'");
    g_env = {{"CUDASHIM_MANAGED", "\x1b]0;pwned\x07\x1b[31mred"}};  // an enforcement setting: an error
    const LoadResult e = load();
    REQUIRE(e.errors.size() == 1);
    CHECK(e.errors[0] == "CUDASHIM_MANAGED='\\x1b]0;pwned\\x07\\x1b[31mred' is not valid: use allow, warn, deny");
    TempFile f("[memory]\n\"\\u001b[2J\" = 1\n");
    g_env = {{"CUDASHIM_POLICY", f.path}};
    const LoadResult k = load();
    REQUIRE(k.errors.size() == 1);
    CHECK(k.errors[0] == f.path + ":2:15: unknown setting 'memory.\\x1b[2J' (see `cudashim options` for the list)");
  }
  SECTION("unknown keys: the first 10 listed, in the file's order, the rest counted (300,000 printed 49 MB)") {
    std::string text = "[memory]\n";
    for (int i = 0; i < 250; ++i) text += "k" + std::to_string(i) + "=1\n";  // toml++ iterates them as k0, k1, k10, ...
    TempFile f(text);
    g_env["CUDASHIM_POLICY"] = f.path;
    const LoadResult r = load();
    REQUIRE(r.errors.size() == kListedErrorsPerFile);
    CHECK(r.unlisted_errors == 240);
    CHECK(r.errors[9] == f.path + ":11:4: unknown setting 'memory.k9' (see `cudashim options` for the list)");
    CHECK(r.errors[0] == f.path + ":2:4: unknown setting 'memory.k0' (see `cudashim options` for the list)");
    const auto lines = r.error_lines();
    REQUIRE(lines.size() == kListedErrorsPerFile + 1);
    CHECK(lines.back() == "... and " + std::to_string(r.unlisted_errors) + " more errors (`cudashim policy check " +
                              f.path + "` lists them all)");
    CHECK(r.stop_line().find("(and " + std::to_string(r.unlisted_errors + kListedErrorsPerFile - 1) + " more)") !=
          std::string::npos);
    std::size_t bytes = 0;
    for (const auto& l : lines) bytes += l.size();
    CHECK(bytes < 4096);
    const LoadResult all = load_policy(fake_getenv, "", 1u << 30);  // what `cudashim policy check` lists
    CHECK(all.errors.size() == kListedErrorsPerFile + r.unlisted_errors);
    CHECK(all.unlisted_errors == 0);
  }
  SECTION("the stop line names file:line:column, how many more, and what to do") {
    TempFile f("[memory]\ncapp = 1\nmanaged = \"sometimes\"\n");
    g_env["CUDASHIM_POLICY"] = f.path;
    const LoadResult r = load();
    CHECK(r.stop_line() == "invalid policy: " + f.path + ":2:8: unknown setting 'memory.capp'; did you mean "
                           "'memory.cap'? (see `cudashim options` for the list) (and 1 more); stopping at the first CUDA call (exit 78): fix the file "
                           "(`cudashim policy check " + f.path + "` lists every error) or set policy.on_invalid = "
                           "\"warn\" in it");
  }
}

TEST_CASE("printable: what a value may show on a terminal", "[policy]") {
  CHECK(printable("plain /tmp/x.toml") == "plain /tmp/x.toml");
  CHECK(printable("a\x1b[31mb\x07") == "a\\x1b[31mb\\x07");
  CHECK(printable("line\nnext\r\t") == "line\\nnext\\r\\t");
  CHECK(printable("del\x7f") == "del\\x7f");
  CHECK(printable("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");  // UTF-8 stays
  CHECK(printable("csi\xc2\x9b" "2J") == "csi\\xc2\\x9b2J");                        // C1 CSI, UTF-8 encoded
  CHECK(printable("raw\x9b\xff\xc3") == "raw\\x9b\\xff\\xc3");                // not UTF-8
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");                        // a surrogate
  CHECK(printable(std::string(100, 'x'), 8) == "xxxxxxxx...");
  CHECK(printable("ab\xc3\xa9", 3) == "ab...");  // never half a character
  std::string kept;
  for_each_printable("a\nb\x1b", [&](char c) { kept += c; }, std::string_view::npos, /*keep_newlines=*/true);
  CHECK(kept == "a\nb\\x1b");
}

TEST_CASE("a locked administrator policy can be tightened, never loosened", "[policy]") {
  TempFile admin("[policy]\nlocked = true\n[memory]\ncap = \"8GiB\"\nmanaged = \"warn\"\n[framework]\ncuda_module_loading = \"LAZY\"\n");
  SECTION("the environment lowers the cap and tightens managed: taken") {
    g_env = {{"CUDASHIM_MEM_CAP", "4GiB"}, {"CUDASHIM_MANAGED", "deny"}};
    const LoadResult r = load(admin.path);
    CHECK(r.warnings.empty());
    CHECK(r.policy.settings.mem_cap.bytes == 4ull << 30);
    CHECK(r.policy.settings.managed == Managed::deny);
  }
  SECTION("the environment raises the cap, allows managed, unlocks, changes a fixed setting: refused") {
    g_env = {{"CUDASHIM_MEM_CAP", "16GiB"}, {"CUDASHIM_MANAGED", "allow"}, {"CUDASHIM_LOCKED", "0"},
             {"CUDASHIM_MODULE_LOADING", "EAGER"}, {"CUDASHIM_DISABLE", "1"}};
    const LoadResult r = load(admin.path);
    CHECK(r.policy.settings.mem_cap.bytes == 8ull << 30);
    CHECK(r.policy.settings.managed == Managed::warn);
    CHECK(r.policy.settings.locked);
    CHECK(r.policy.settings.module_loading == ModuleLoading::lazy);
    CHECK_FALSE(r.policy.settings.disable);
    REQUIRE(r.warnings.size() == 5);
    CHECK(r.warnings[0].find("CUDASHIM_DISABLE is fixed by the administrator") != std::string::npos);
    CHECK(r.warnings[1].find("CUDASHIM_MEM_CAP '17179869184' is not tighter than '8589934592'") != std::string::npos);
    CHECK(r.warnings[4].find("CUDASHIM_LOCKED: ignored: only a policy file") == 0);
    // Each refused value is recorded for the report's policy.refused and the summary's line.
    REQUIRE(r.policy.refused.size() == 4);
    const Refusal* cap = nullptr;
    for (const Refusal& x : r.policy.refused)
      if (x.setting == Setting::MEM_CAP) cap = &x;
    REQUIRE(cap != nullptr);
    CHECK(cap->value == "16GiB");
    CHECK(cap->from == "CUDASHIM_MEM_CAP");
    CHECK(cap->kept == "8589934592");
    CHECK(cap->why == "'17179869184' is not tighter than '8589934592' (the policy locked by " + admin.path + ":2:10)");
    CHECK(r.policy.refused[0].setting == Setting::DISABLE);
    CHECK(r.policy.refused[0].why.rfind("it is fixed by the administrator (the policy locked by ", 0) == 0);
  }
  SECTION("a value the lock allows is no refusal") {
    g_env = {{"CUDASHIM_MEM_CAP", "8GiB"}};
    CHECK(load(admin.path).policy.refused.empty());
  }
  SECTION("a user file cannot remove the cap or unlock") {
    TempFile user("[policy]\nlocked = false\n[memory]\ncap = \"\"\n");
    g_env = {{"CUDASHIM_POLICY", user.path}};
    const LoadResult r = load(admin.path);
    CHECK(r.policy.settings.mem_cap.bytes == 8ull << 30);
    CHECK(r.policy.settings.locked);
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].find("would remove the cap") != std::string::npos);
  }
}

namespace {
uint64_t fake_total(int) { return 1000; }
uint64_t fake_free(int) { return 300; }
}  // namespace

TEST_CASE("admission: caps on every kind that uses device memory, exact under threads", "[policy][admission]") {
  recorder::reset_all();
  g_env = {{"CUDASHIM_MEM_CAP", "0.5"}};  // half of fake_total = 500 bytes
  configure_admission(load().policy.settings, {fake_total, fake_free});
  CHECK(cap_of(0) == 500);
  SECTION("allocations until the cap, then CUDA_ERROR_OUT_OF_MEMORY semantics") {
    CHECK(admit(HookId::cuMemAlloc_v2, MemKind::device, 0, 200) == Verdict::admit);
    commit(MemKind::device, 0x1000, 200, 200, 0);
    CHECK(admit(HookId::cuMemAllocAsync, MemKind::async, 0, 200) == Verdict::admit);
    commit(MemKind::async, 0x2000, 200, 200, 0);
    CHECK(admit(HookId::cuMemCreate, MemKind::vmm_device, 0, 200) == Verdict::deny_cap);
    CHECK(admit(HookId::cuMemAllocHost_v2, MemKind::host_pinned, kHostDevice, 10000) == Verdict::admit);
    size_t free = 700, total = 1000;
    cap_mem_info(0, &free, &total);
    CHECK(total == 500);
    CHECK(free == 100);
    cap_mem_info(0, nullptr, nullptr);  // OptiX passes NULL to cuMemGetInfo_v2
    recorder::record_free(MemKind::device, 0x1000);
    CHECK(admit(HookId::cuMemCreate, MemKind::vmm_device, 0, 200) == Verdict::admit);
  }
  SECTION("free is never negative once usage passed the cap") {
    CHECK(admit(HookId::cuMemAlloc_v2, MemKind::device, 0, 500) == Verdict::admit);
    size_t free = 900, total = 1000;
    cap_mem_info(0, &free, &total);
    CHECK(free == 0);
  }
  SECTION("a failed real allocation gives its charge back") {
    CHECK(admit(HookId::cuMemAlloc_v2, MemKind::device, 0, 400) == Verdict::admit);
    rollback(HookId::cuMemAlloc_v2, MemKind::device, 0, 400, 2);
    CHECK(recorder::ledger_capped_bytes(0) == 0);
  }
  SECTION("32 threads allocating against one cap never exceed it") {
    std::vector<std::thread> ts;
    std::atomic<int> admitted{0};
    for (int t = 0; t < 32; ++t)
      ts.emplace_back([&] {
        for (int i = 0; i < 1000; ++i)
          if (admit(HookId::cuMemAlloc_v2, MemKind::device, 0, 7) == Verdict::admit) admitted++;
      });
    for (auto& t : ts) t.join();
    CHECK(admitted == 500 / 7);
    CHECK(recorder::ledger_capped_bytes(0) == (500 / 7) * 7);
  }
}

TEST_CASE("admission: managed memory rules", "[policy][admission]") {
  recorder::reset_all();
  SECTION("deny") {
    g_env = {{"CUDASHIM_MANAGED", "deny"}};
    configure_admission(load().policy.settings, {fake_total, fake_free});
    CHECK(admit(HookId::cuMemAllocManaged, MemKind::managed, 0, 10) == Verdict::deny_managed);
    CHECK(admit(HookId::cuMemAlloc_v2, MemKind::device, 0, 10) == Verdict::admit);
  }
  SECTION("the oversubscription guard refuses more than the device has free") {
    g_env.clear();
    configure_admission(load().policy.settings, {fake_total, fake_free});
    CHECK(admit(HookId::cuMemAllocManaged, MemKind::managed, 0, 301) == Verdict::deny_oversubscription);
    CHECK(admit(HookId::cuMemAllocManaged, MemKind::managed, 0, 300) == Verdict::admit);
  }
}

TEST_CASE("each row is a typed field: its default reads as its type, its field is its name", "[policy]") {
  for (const SettingRow& row : kSettingRows) {
    INFO(row.name);
    std::string lower = row.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    CHECK(lower == row.field);
    Settings s;
    std::string norm;
    if (row.type != SettingType::path || *row.default_value != '\0')  // "" = an unset path
      CHECK(parse_setting(static_cast<Setting>(&row - kSettingRows), row.default_value, s, norm));
  }
  const Settings d;
  CHECK_FALSE(d.disable);
  CHECK(d.report);
  CHECK(d.sites);
  CHECK(d.sync_warmup_hits == 10);
  CHECK(d.sync_readback_max_bytes == 4096);
  CHECK(d.pool_max_cached.bytes == 1ull << 30);
  CHECK(d.pool_max_block.bytes == 256ull << 20);
  CHECK(d.log_level == LogThreshold::warn);
  CHECK(d.on_invalid == OnInvalid::fail);
  CHECK(d.module_loading == ModuleLoading::unset);
  CHECK(d.driver_version_file == "/proc/driver/nvidia/version");
}

TEST_CASE("values are parsed once into their fields", "[policy]") {
  g_env = {{"CUDASHIM_SYNC_WARMUP_HITS", "007"}, {"CUDASHIM_POOL_MAX_BLOCK", "50%"}, {"CUDASHIM_LOG_LEVEL", "warning"},
           {"CUDASHIM_SITES", "off"}, {"CUDASHIM_MODULE_LOADING", "EAGER"}};
  const LoadResult r = load();
  CHECK(r.warnings.empty());
  CHECK(r.policy.settings.sync_warmup_hits == 7);
  CHECK(r.policy.text_of(Setting::SYNC_WARMUP_HITS) == "7");
  CHECK(r.policy.settings.pool_max_block.fraction == 0.5);
  CHECK(r.policy.text_of(Setting::POOL_MAX_BLOCK) == "0.5");
  CHECK(r.policy.settings.log_level == LogThreshold::warn);
  CHECK(r.policy.text_of(Setting::LOG_LEVEL) == "warn");
  CHECK_FALSE(r.policy.settings.sites);
  CHECK(r.policy.settings.module_loading == ModuleLoading::eager);
  SECTION("a cap of the whole device stays a fraction (it is not one byte)") {
    for (const char* whole : {"100%", "1.0"}) {
      INFO(whole);
      g_env = {{"CUDASHIM_MEM_CAP", whole}};
      const LoadResult w = load();
      CHECK(w.policy.settings.mem_cap.bytes == 0);
      CHECK(w.policy.settings.mem_cap.fraction == 1.0);
      CHECK(w.policy.text_of(Setting::MEM_CAP) == "1.0");
    }
  }
  SECTION("under a locked whole-device cap, half the device is tighter") {
    TempFile admin("[policy]\nlocked = true\n[memory]\ncap = \"100%\"\n");
    g_env = {{"CUDASHIM_MEM_CAP", "50%"}};
    const LoadResult w = load(admin.path);
    CHECK(w.warnings.empty());
    CHECK(w.policy.settings.mem_cap.fraction == 0.5);
  }
}

TEST_CASE("the process settings are the defaults until the shim installs its own", "[policy]") {
  CHECK(process_settings().driver_version_file == "/proc/driver/nvidia/version");
  Settings mine;
  mine.driver_version_file = "/tmp/version";
  install_process_settings(mine);
  CHECK(process_settings().driver_version_file == "/tmp/version");
  install_process_settings(Settings{});
}

TEST_CASE("the settings table documents every setting", "[policy]") {
  const std::string md = settings_markdown();
  for (int i = 0; i < kSettings; ++i)
    CHECK(md.find(std::string("`CUDASHIM_") + kSettingRows[i].name + "`") != std::string::npos);
}

// The predicted saving of a blocking habit (policy/sync_rules.h, docs/findings.md "What a
// finding costs"): step - max(host's own time, GPU busy) = min(blocked, step - blocked, GPU idle).
TEST_CASE("predicted saving: the blocked time, bounded by the host's own time and the GPU's idle", "[policy]") {
  using cudashim::policy::kNoGpuIdle;
  using cudashim::policy::predicted_saving_ns;
  // A 1 ms wait in a 2 ms step whose host work is 1 ms (the H200 price benchmark's read-backs):
  // without it the host's 1 ms runs under the GPU's 1 ms: the step loses the wait.
  CHECK(predicted_saving_ns(1000000, 2000000, kNoGpuIdle) == 1000000);
  // GPU-bound: 95 ms of a 100 ms step waiting at .item(), the host launching for 5 ms: at most
  // the host's own 5 ms can go ...
  CHECK(predicted_saving_ns(95000000, 100000000, kNoGpuIdle) == 5000000);
  // ... and NVML saw the GPU idle 1 % of the steady state (1 ms a step): the GPU was busy while
  // the host launched too, so only its idle millisecond can go.
  CHECK(predicted_saving_ns(95000000, 100000000, 1000000) == 1000000);
  // Host-bound with the GPU's work overlapping: a 1 ms wait in a 5 ms step, GPU idle 0: nothing.
  CHECK(predicted_saving_ns(1000000, 5000000, 0) == 0);
  // No step known (a process-wide count): the blocked time.
  CHECK(predicted_saving_ns(300000, 0, kNoGpuIdle) == 300000);
  // A pageable copy (host-staged): 3.3 ms of a 4.8 ms step in the copy, most of it the host's own
  // staging while the GPU waits for the data: not bounded by the host's other 1.5 ms, only by the
  // GPU's idle (2.5 ms a step) ...
  CHECK(predicted_saving_ns(3300000, 4800000, 2500000, true) == 2500000);
  CHECK(predicted_saving_ns(3300000, 4800000, 2500000, false) == 1500000);
  // ... and never more than the wait itself.
  CHECK(predicted_saving_ns(3300000, 4800000, kNoGpuIdle, true) == 3300000);
  // An allocator's churn (empty_cache() in the loop): 0.9 ms in the frees' syncs and 0.6 ms of
  // re-allocations a step, in a 2.8 ms step whose GPU idles 1.45 ms: the idle bounds it ...
  CHECK(predicted_saving_ns(900000, 2800000, 1450000, false, 600000) == 1450000);
  // ... and with the GPU's idle unknown, the wait plus the re-allocations.
  CHECK(predicted_saving_ns(900000, 2800000, kNoGpuIdle, false, 600000) == 1500000);
}
