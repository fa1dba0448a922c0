// settings_load.cpp: building the policy from files and the environment.
#include "policy/settings_load.h"

#include <fmt/format.h>
#include <sys/stat.h>

#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <cmath>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

namespace cudashim::policy {

const SettingRow kSettingRows[] = {
#define CUDASHIM_SETTING(type, NAME, key, def, tighten, doc) {#type, #NAME, key, def, #tighten, doc},
#include "policy/settings.def"
#undef CUDASHIM_SETTING
};
const int kSettingCount = kSettings;

namespace {

constexpr const char* kLevels[] = {"off", "error", "warn", "info", "debug"};

// The choices of a "choice:a|b|c" type, loosest first.
std::vector<std::string> choices_of(const SettingRow& row) {
  std::vector<std::string> out;
  std::string_view t = row.type;
  if (t.rfind("choice:", 0) != 0) return out;
  t.remove_prefix(7);
  size_t start = 0;
  for (;;) {
    const size_t bar = t.find('|', start);
    out.emplace_back(t.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start));
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return out;
}

std::string accepted_text(const SettingRow& row) {
  const std::string_view t = row.type;
  if (t == "bool") return "1 or 0 (true/false, yes/no, on/off)";
  if (t == "loglevel") return "off, error, warn, info or debug";
  if (t == "count") return "a whole number from 0 to 1000000000";
  if (t == "memsize") return "bytes with a unit (8GiB, 512MiB, 1.5e9) or a fraction of the device's memory (0.5 or 50%)";
  if (t.rfind("choice:", 0) == 0) {
    std::string s;
    for (const auto& c : choices_of(row)) s += (s.empty() ? "" : ", ") + (c.empty() ? std::string("\"\" (unset)") : c);
    return s;
  }
  return "a non-empty value";
}

// Normalizes `raw` for `row`; false when it is not acceptable.
bool normalize(const SettingRow& row, const std::string& raw, std::string& out) {
  const std::string_view t = row.type;
  if (t == "bool") {
    for (const char* s : {"1", "true", "yes", "on", "TRUE", "True", "YES", "ON"})
      if (raw == s) return out = "1", true;
    for (const char* s : {"0", "false", "no", "off", "FALSE", "False", "NO", "OFF"})
      if (raw == s) return out = "0", true;
    return false;
  }
  if (t == "loglevel") {
    for (const char* l : kLevels)
      if (raw == l) return out = l, true;
    if (raw == "warning") return out = "warn", true;
    return false;
  }
  if (t == "count") {
    if (raw.empty() || raw.size() > 10 || raw.find_first_not_of("0123456789") != std::string::npos) return false;
    const unsigned long long v = std::stoull(raw);
    if (v > 1000000000ull) return false;
    out = std::to_string(v);
    return true;
  }
  if (t == "memsize") {
    if (raw.empty()) return out = "", true;
    MemSize m;
    if (!parse_memsize(raw, m)) return false;
    out = m.bytes ? std::to_string(m.bytes) : fmt::format("{}", m.fraction);
    return true;
  }
  if (t.rfind("choice:", 0) == 0) {
    for (const auto& c : choices_of(row))
      if (raw == c) return out = raw, true;
    return false;
  }
  if (raw.size() > 4000 || raw.find('\n') != std::string::npos) return false;
  if (t == "path" && raw.empty()) return false;
  out = raw;
  return true;
}

int rank_of(const SettingRow& row, const std::string& v) {
  if (std::string_view(row.type) == "bool") return v == "1" ? 1 : 0;
  const auto c = choices_of(row);
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] == v) return static_cast<int>(i);
  return -1;
}

// Under a locked policy: may `next` replace `cur` for `row`? Fills `why` when not.
bool may_change(const SettingRow& row, const std::string& cur, const std::string& next, std::string& why) {
  const std::string_view tighten = row.tighten;
  if (tighten == "any" || cur == next) return true;
  if (tighten == "rank") {
    if (rank_of(row, next) >= rank_of(row, cur)) return true;
    why = fmt::format("would loosen it from '{}' to '{}'", cur, next);
    return false;
  }
  if (tighten == "min") {
    MemSize a, b;
    const bool has_a = !cur.empty() && parse_memsize(cur, a), has_b = !next.empty() && parse_memsize(next, b);
    if (!has_b) {
      why = "would remove the cap";
      return false;
    }
    if (!has_a) return true;  // any cap tightens "no cap"
    if ((a.bytes != 0) == (b.bytes != 0) && (a.bytes ? b.bytes <= a.bytes : b.fraction <= a.fraction)) return true;
    why = fmt::format("'{}' is not tighter than '{}'", next, cur);
    return false;
  }
  why = "is fixed by the administrator";
  return false;
}

// Sets setting `i` to `raw` from `origin`, honoring normalization and the lock.
void set_value(LoadResult& r, int i, const std::string& raw, const std::string& origin, bool from_file, bool locked,
               const std::string& lock_origin) {
  const SettingRow& row = kSettingRows[i];
  std::string norm;
  if (!normalize(row, raw, norm)) {
    const std::string msg = fmt::format("{}: {}='{}' is not valid: use {}", origin,
                                        from_file ? std::string(row.toml_key) : "CUDASHIM_" + std::string(row.name),
                                        raw.substr(0, 64), accepted_text(row));
    if (from_file)
      r.errors.push_back(msg);
    else
      r.warnings.push_back(msg + fmt::format("; using '{}'", r.policy.value[i]));
    return;
  }
  std::string why;
  if (locked && !may_change(row, r.policy.value[i], norm, why)) {
    r.warnings.push_back(fmt::format("{}: {} {}: the policy locked by {} keeps '{}'", origin,
                                     from_file ? std::string(row.toml_key) : "CUDASHIM_" + std::string(row.name), why,
                                     lock_origin, r.policy.value[i]));
    return;
  }
  r.policy.value[i] = norm;
  r.policy.origin[i] = origin;
}

std::string toml_text(const toml::node& n) {
  if (auto s = n.as_string()) return s->get();
  if (auto b = n.as_boolean()) return b->get() ? "1" : "0";
  if (auto v = n.as_integer()) return std::to_string(v->get());
  if (auto f = n.as_floating_point()) return fmt::format("{}", f->get());
  return "\x01";  // a table or an array: never a valid value
}

std::string where(const std::string& path, const toml::source_region& s) {
  return fmt::format("{}:{}:{}", path, s.begin.line, s.begin.column);
}

}  // namespace

bool parse_memsize(const std::string& text, MemSize& out) {
  out = MemSize{};
  std::string s;
  for (char c : text)
    if (c != ' ' && c != '_') s += c;
  if (s.empty() || s.size() > 64) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v) || v <= 0) return false;
  const std::string unit(end);
  if (unit == "%") {
    if (v > 100) return false;
    out.fraction = v / 100.0;
    return true;
  }
  static const struct {
    const char* name;
    double mult;
  } kUnits[] = {{"", 1},      {"B", 1},         {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
                {"TiB", 1099511627776.0}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},        {"TB", 1e12},
                {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0}};
  for (const auto& u : kUnits) {
    if (unit != u.name) continue;
    if (unit.empty() && v <= 1.0 && s.find_first_of(".eE") != std::string::npos) {
      out.fraction = v;  // "0.5": a fraction of the device
      return true;
    }
    const double bytes = v * u.mult;
    if (bytes < 1 || bytes > 1.8e19) return false;
    out.bytes = static_cast<uint64_t>(bytes);
    return true;
  }
  return false;
}

int Policy::log_level() const {
  for (int i = 0; i < 5; ++i)
    if (get(Setting::LOG_LEVEL) == kLevels[i]) return i - 1;
  return 1;
}

MemSize Policy::mem_cap() const {
  MemSize m;
  if (!get(Setting::MEM_CAP).empty()) parse_memsize(get(Setting::MEM_CAP), m);
  return m;
}

Managed Policy::managed() const {
  const std::string& v = get(Setting::MANAGED);
  return v == "deny" ? Managed::deny : v == "warn" ? Managed::warn : Managed::allow;
}

bool LoadResult::stop() const { return !errors.empty() && policy.get(Setting::ON_INVALID) != "warn"; }

// TOML keeps non-ASCII text to strings and comments (bare keys are ASCII). toml++
// 3.3 reaches undefined behaviour on some non-ASCII bare keys (found by
// tests/fuzz/fuzz_policy.cpp), so such a byte is an error before it parses.
// Returns "" or "line:column: what". Triple-quoted strings count as strings.
std::string non_ascii_outside_strings(std::string_view t) {
  size_t line = 1, col = 1;
  char quote = 0;       // the quote character while inside a string
  bool triple = false;  // inside a triple-quoted string
  bool comment = false;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '\n') {
      ++line, col = 1, comment = false;
      if (quote && !triple) quote = 0;  // a one-line string ends here (toml++ reports it)
      continue;
    }
    if (comment) {
      ++col;
      continue;
    }
    if (quote) {
      if (c == '\\' && quote == '"' && i + 1 < t.size() && t[i + 1] != '\n') {
        i++, col += 2;
        continue;
      }
      if (c == quote && (!triple || t.substr(i, 3) == std::string(3, quote))) {
        if (triple) i += 2, col += 2;
        quote = 0, triple = false;
      }
      ++col;
      continue;
    }
    if (c == '#') {
      comment = true;
    } else if (c == '"' || c == '\'') {
      quote = c;
      triple = t.substr(i, 3) == std::string(3, c);
      if (triple) i += 2, col += 2;
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      return fmt::format("{}:{}: a non-ASCII character outside a string or a comment (TOML keys and non-string "
                         "values are ASCII); quote the value or remove the character",
                         line, col);
    }
    ++col;
  }
  return "";
}

void apply_file(LoadResult& r, const std::string& path, bool admin) {
  const bool locked = !admin && r.policy.flag(Setting::LOCKED);
  const std::string lock_origin = r.policy.origin[static_cast<int>(Setting::LOCKED)];
  toml::table tbl;
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      r.errors.push_back(fmt::format("{}: cannot be read: {}", path, std::strerror(errno)));
      return;
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (const std::string bad = non_ascii_outside_strings(text); !bad.empty()) {
      r.errors.push_back(fmt::format("{}:{}", path, bad));
      return;
    }
    tbl = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    r.errors.push_back(fmt::format("{}: {}", where(path, e.source()), e.description()));
    return;
  } catch (const std::exception& e) {
    r.errors.push_back(fmt::format("{}: cannot be read: {}", path, e.what()));
    return;
  }
  // Every key must be a known setting: a typo must not silently do nothing.
  for (auto&& [section, node] : tbl) {
    const auto* sub = node.as_table();
    if (sub == nullptr) {
      r.errors.push_back(fmt::format("{}: '{}' is not a section; settings live in [output], [memory], [framework], [policy]",
                                     where(path, node.source()), section.str()));
      continue;
    }
    for (auto&& [key, value] : *sub) {
      const std::string full = std::string(section.str()) + "." + std::string(key.str());
      int found = -1;
      for (int i = 0; i < kSettings; ++i)
        if (full == kSettingRows[i].toml_key) found = i;
      if (found < 0) {
        r.errors.push_back(fmt::format("{}: unknown setting '{}' (see `cudashim options` for the list)",
                                       where(path, value.source()), full));
        continue;
      }
      if (!admin && found == static_cast<int>(Setting::LOCKED) && locked) continue;
      set_value(r, found, toml_text(value), where(path, value.source()), true, locked, lock_origin);
    }
  }
}

LoadResult load_policy(const char* (*getenv_fn)(const char*), const std::string& admin_file) {
  LoadResult r;
  for (int i = 0; i < kSettings; ++i) {
    r.policy.value[i] = kSettingRows[i].default_value;
    r.policy.origin[i] = "default";
  }
  struct stat st {};
  if (!admin_file.empty() && stat(admin_file.c_str(), &st) == 0) apply_file(r, admin_file, true);
  const char* user = getenv_fn("CUDASHIM_POLICY");
  if (user != nullptr && *user != '\0') apply_file(r, user, false);
  const bool locked = r.policy.flag(Setting::LOCKED);
  const std::string lock_origin = r.policy.origin[static_cast<int>(Setting::LOCKED)];
  for (int i = 0; i < kSettings; ++i) {
    const std::string var = std::string("CUDASHIM_") + kSettingRows[i].name;
    const char* raw = getenv_fn(var.c_str());
    if (raw != nullptr && i == static_cast<int>(Setting::LOCKED)) {
      r.warnings.push_back(var + ": ignored: only a policy file (policy.locked) can lock a policy, and the environment "
                                 "cannot unlock one");
      continue;
    }
    if (raw == nullptr || i == static_cast<int>(Setting::POLICY)) {
      if (raw != nullptr && i == static_cast<int>(Setting::POLICY)) {
        r.policy.value[i] = raw;
        r.policy.origin[i] = var;
      }
      continue;
    }
    set_value(r, i, raw, var, false, locked, lock_origin);
  }
  return r;
}

std::string describe(const Policy& p) {
  std::string out;
  for (int i = 0; i < kSettings; ++i) {
    const SettingRow& row = kSettingRows[i];
    const std::string key = *row.toml_key ? row.toml_key : std::string("(env) CUDASHIM_") + row.name;
    out += fmt::format("{:<40} = {:<16} # {}\n", key, "\"" + p.value[i] + "\"", p.origin[i]);
  }
  return out;
}

std::string settings_markdown() {
  std::string out = "| Environment | Policy file key | Type | Default | Locked policy | Meaning |\n|---|---|---|---|---|---|\n";
  for (int i = 0; i < kSettings; ++i) {
    const SettingRow& r = kSettingRows[i];
    const std::string_view t = r.tighten;
    const char* lock = t == "any" ? "free" : t == "min" ? "may only lower" : t == "rank" ? "may only tighten" : "fixed";
    std::string type = r.type;
    for (char& c : type)
      if (c == '|') c = '/';
    out += fmt::format("| `CUDASHIM_{}` | {} | {} | `{}` | {} | {} |\n", r.name,
                       *r.toml_key ? fmt::format("`{}`", r.toml_key) : std::string("(environment only)"), type,
                       r.default_value, lock, r.doc);
  }
  return out;
}

}  // namespace cudashim::policy
