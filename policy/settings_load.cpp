// settings_load.cpp: the settings, parsed once from the defaults, the policy files and the
// environment (see settings_load.h).
#include "policy/settings_load.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include "policy/did_you_mean.h"
#include "policy/printable.h"
#include "symbols/bounded_read.h"

#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <functional>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace cudashim::policy {

namespace {

// Parses `raw` as a value of TYPE `T` into `out` and its normalized text; false, changing
// neither, when it is not one.
template <SettingType T>
bool parse_value(const std::string& raw, setting_field_t<T>& out, std::string& norm) {
  if constexpr (T == SettingType::flag) {
    for (const char* w : kFlagOnWords)
      if (raw == w) return out = true, norm = "1", true;
    for (const char* w : kFlagOffWords)
      if (raw == w) return out = false, norm = "0", true;
    return false;
  } else if constexpr (T == SettingType::count) {
    if (raw.empty() || raw.size() > 10 || raw.find_first_not_of("0123456789") != std::string::npos) return false;
    const unsigned long long v = std::stoull(raw);
    if (v > kCountMax) return false;
    out = v;
    norm = std::to_string(v);
    return true;
  } else if constexpr (T == SettingType::memsize) {
    MemSize m;
    if (!raw.empty() && !parse_memsize(raw, m)) return false;
    out = m;
    if (!m.set())
      norm.clear();
    else if (m.bytes)
      norm = std::to_string(m.bytes);
    else
      // A fraction is written so that it reads back as one: 1.0, not "1" (one byte).
      norm = m.fraction == 1.0 ? std::string("1.0") : fmt::format("{}", m.fraction);
    return true;
  } else if constexpr (T == SettingType::path || T == SettingType::text) {
    if (raw.size() > kLineMax || raw.find('\n') != std::string::npos) return false;
    if (T == SettingType::path && raw.empty()) return false;
    out = raw;
    norm = raw;
    return true;
  } else {
    const SettingTypeInfo& info = setting_type_info(T);
    const std::string& word = T == SettingType::log_level && raw == "warning" ? std::string("warn") : raw;
    for (size_t i = 0; i < info.word_count; ++i)
      if (word == info.words[i]) return out = static_cast<setting_field_t<T>>(i), norm = word, true;
    return false;
  }
}

// Under a locked policy: may `next` (written `next_text`) replace `cur` (`cur_text`)?
// Fills `why` when not.
template <SettingType T, Tighten How>
bool may_change(const setting_field_t<T>& cur, const std::string& cur_text, const setting_field_t<T>& next,
                const std::string& next_text, std::string& why) {
  if constexpr (How == Tighten::any) {
    return true;
  } else if (cur_text == next_text) {
    return true;
  } else if constexpr (How == Tighten::rank) {
    if (static_cast<int>(next) >= static_cast<int>(cur)) return true;
    why = fmt::format("would loosen it from '{}' to '{}'", cur_text, next_text);
    return false;
  } else if constexpr (How == Tighten::min) {
    if (!next.set()) {
      why = "would remove the cap";
      return false;
    }
    if (!cur.set()) return true;  // any cap tightens "no cap"
    if ((cur.bytes != 0) == (next.bytes != 0) && (cur.bytes ? next.bytes <= cur.bytes : next.fraction <= cur.fraction))
      return true;
    why = fmt::format("'{}' is not tighter than '{}'", next_text, cur_text);
    return false;
  } else {
    why = "is fixed by the administrator";
    return false;
  }
}

// Sets `field` to a row's default.
template <SettingType T>
void set_default(setting_field_t<T>& field, const char* def) {
  std::string norm;
  if constexpr (T == SettingType::path)
    field = def;
  else
    parse_value<T>(def, field, norm);
}

enum class Outcome { set, invalid, refused };

// Parses `raw` for one row and, when a lock allows it, stores it in `field` and `text`.
template <SettingType T, Tighten How>
Outcome set_typed(setting_field_t<T>& field, std::string& text, const std::string& raw, bool locked, std::string& why) {
  setting_field_t<T> v{};
  std::string norm;
  if (!parse_value<T>(raw, v, norm)) return Outcome::invalid;
  if (locked && !may_change<T, How>(field, text, v, norm, why)) return Outcome::refused;
  field = std::move(v);
  text = std::move(norm);
  return Outcome::set;
}

Outcome set_row(Policy& p, Setting s, const std::string& raw, bool locked, std::string& why) {
  switch (s) {
#define CUDASHIM_SETTING(TYPE, NAME, field, key, def, tighten, role, doc) \
  case Setting::NAME:                                               \
    return set_typed<SettingType::TYPE, Tighten::tighten>(p.settings.field, p.text[static_cast<int>(s)], raw, locked, why);
#include "catalog/settings.def"
#undef CUDASHIM_SETTING
    case Setting::kCount: break;
  }
  return Outcome::invalid;
}

// What is wrong with `raw` beyond "not one of the accepted values", when a message should
// say it: a path or a text setting is one line of at most kLineMax bytes. "" otherwise.
std::string line_problem(SettingType t, const std::string& raw) {
  if (t != SettingType::path && t != SettingType::text) return "";
  if (raw.find('\n') != std::string::npos) return " (it holds a newline)";
  if (raw.size() > kLineMax) return fmt::format(" (it is {} characters long)", raw.size());
  if (raw.empty()) return " (it is empty)";
  return "";
}

// A message about a value a file or the environment gave.
struct Message {
  enum Kind { none, error, warning } kind = none;
  std::string text;
  bool enforced_invalid = false;  // an environment value of an `enforce` setting that does not parse
  std::string as_error{};         // then: the message as an error, when policy.on_invalid = fail
};

// Sets setting `i` to `raw` from `origin`, honoring its type and the lock. Returns what to say:
// an error for a bad value in a file, a warning for one in the environment or a refused change.
Message set_value(LoadResult& r, int i, const std::string& raw, const std::string& origin, bool from_file, bool locked,
                  const std::string& lock_origin) {
  const SettingRow& row = kSettingRows[i];
  const std::string what = from_file ? std::string(row.toml_key) : "CUDASHIM_" + std::string(row.name);
  std::string why;
  switch (set_row(r.policy, static_cast<Setting>(i), raw, locked, why)) {
    case Outcome::invalid: {
      r.policy.refused.push_back({static_cast<Setting>(i), printable(raw, 64), origin,
                                  fmt::format("not valid{}: use {}", line_problem(row.type, raw), row.type_info().accepted),
                                  printable(r.policy.text[i], 64)});
      const std::string msg = fmt::format("{}: {}='{}' is not valid{}: use {}", origin, what, printable(raw, 64),
                                          line_problem(row.type, raw), row.type_info().accepted);
      if (from_file) return {Message::error, msg};
      Message m{Message::warning, msg + fmt::format("; using '{}'", printable(r.policy.text[i], 64))};
      if (row.enforces()) {
        // A limit must not turn itself off over a typo: policy.on_invalid decides (load_policy).
        m.enforced_invalid = true;
        m.as_error = fmt::format("{}='{}' is not valid{}: use {}", what, printable(raw, 64), line_problem(row.type, raw),
                                 row.type_info().accepted);
        m.text += " (policy.on_invalid = \"warn\")";
      }
      return m;
    }
    case Outcome::refused:
      r.policy.refused.push_back({static_cast<Setting>(i), printable(raw, 64), origin,
                                  fmt::format("{}{} (the policy locked by {})", why.rfind("is ", 0) == 0 ? "it " : "",
                                              printable(why), lock_origin),
                                  printable(r.policy.text[i], 64)});
      return {Message::warning, fmt::format("{}: {} {}: the policy locked by {} keeps '{}'", origin, what, printable(why),
                                            lock_origin, printable(r.policy.text[i], 64))};
    case Outcome::set: r.policy.origin[i] = origin; return {};
  }
  return {};
}

// What a TOML value that no setting can take is ("a table"), or nullptr for a string, a
// number or a boolean.
const char* toml_non_scalar(const toml::node& n) {
  if (n.is_table()) return "a table";
  if (n.is_array()) return "an array";
  if (n.is_date() || n.is_time() || n.is_date_time()) return "a date or a time";
  return nullptr;
}

// A scalar TOML value as the text its setting parses. pre: toml_non_scalar(n) == nullptr.
std::string toml_text(const toml::node& n) {
  if (auto s = n.as_string()) return s->get();
  if (auto b = n.as_boolean()) return b->get() ? "1" : "0";
  if (auto v = n.as_integer()) return std::to_string(v->get());
  if (auto f = n.as_floating_point()) {
    // A TOML float stays a float: `cap = 1.0` is the whole device, not "1" (one byte).
    std::string t = fmt::format("{}", f->get());
    if (t.find_first_of(".eEn") == std::string::npos) t += ".0";
    return t;
  }
  return "";
}

// "; did you mean 'memory.managed'?" for an unknown policy file key: its last part against the
// last part of each key of the table, so that a shared "memory." does not make every key look
// close, and a key in the wrong section is found too.
std::string closest_keys(std::string_view key) {
  auto last = [](std::string_view k) { return k.substr(k.rfind('.') + 1); };
  std::vector<std::string_view> parts;
  for (const SettingRow& row : kSettingRows)
    if (*row.toml_key) parts.push_back(last(row.toml_key));
  // The same name in another section is the closest of all ([output] cap = ...).
  auto best = std::find(parts.begin(), parts.end(), last(key)) != parts.end()
                  ? std::vector<std::string_view>{last(key)}
                  : closest_names(last(key), parts);
  std::vector<std::string_view> keys;
  for (const SettingRow& row : kSettingRows)
    if (*row.toml_key && std::find(best.begin(), best.end(), last(row.toml_key)) != best.end() && key != row.toml_key)
      keys.emplace_back(row.toml_key);
  return suggestion_text(keys);
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
  // std::from_chars, not strtod: the same digits whatever LC_NUMERIC the program has set
  // ("1.5GiB" read with a German locale would stop at the '.').
  const char* first = s.data() + (s[0] == '+' ? 1 : 0);
  double v = 0;
  const auto [end, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (ec != std::errc() || !std::isfinite(v) || v <= 0) return false;
  const std::string unit(end);
  if (unit == "%") {
    if (v > 100) return false;
    out.fraction = v / 100.0;
    return true;
  }
  auto same_unit = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  };
  double mult = 0;
  if (unit.empty()) {
    if (v <= 1.0 && s.find_first_of(".eE") != std::string::npos) {
      out.fraction = v;  // "0.5": a fraction of the device
      return true;
    }
    mult = 1;
  }
  for (const MemUnit& u : kMemUnits)
    if (same_unit(unit, u.name)) mult = u.bytes;
  if (mult == 0) return false;
  const double bytes = v * mult;
  if (bytes < 1 || bytes > 1.8e19) return false;
  out.bytes = static_cast<uint64_t>(bytes);
  return true;
}

bool parse_setting(Setting s, const std::string& raw, Settings& out, std::string& normalized) {
  Policy p;
  p.settings = out;
  std::string why;
  if (set_row(p, s, raw, /*locked=*/false, why) != Outcome::set) return false;
  out = std::move(p.settings);
  normalized = std::move(p.text[static_cast<int>(s)]);
  return true;
}

Settings::Settings() {
  // A path's default may be "" (unset), which no file or variable may set; every other
  // default reads as its type (tests/unit/policy_test.cpp checks).
#define CUDASHIM_SETTING(TYPE, NAME, field, key, def, tighten, role, doc) set_default<SettingType::TYPE>(field, def);
#include "catalog/settings.def"
#undef CUDASHIM_SETTING
}

// TOML keeps non-ASCII text to strings and comments (bare keys are ASCII). toml++
// 3.3 reaches undefined behaviour on some non-ASCII bare keys (found by
// tests/fuzz/fuzz_policy.cpp), so such a byte is an error before it parses.
// Returns "" or "line:column: what". Triple-quoted strings count as strings. `entries`
// gets the number of key/value lines and [section] headers: what toml++ would build a node
// for, counted before it parses.
std::string non_ascii_outside_strings(std::string_view t, size_t& entries) {
  entries = 0;
  bool line_start = true;  // only blanks so far on this line, outside strings and comments
  size_t line = 1, col = 1;
  char quote = 0;       // the quote character while inside a string
  bool triple = false;  // inside a triple-quoted string
  bool comment = false;
  bool in_key = true;      // before the line's first '=' (a key or a [section] header)
  bool quoted_key = false;  // the current string is a quoted key: settings' keys are ASCII
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '\n') {
      ++line, col = 1, comment = false, line_start = !quote || !triple;
      if (quote && !triple) quote = 0;  // a one-line string ends here (toml++ reports it)
      if (!quote) in_key = true;
      continue;
    }
    if (comment) {
      ++col;
      continue;
    }
    if (quote) {
      // A quoted key with a non-ASCII byte names no setting, and toml++ 3.3 can reach an
      // unreachable point reporting it (tests/fuzz/found/policy-toml-unreachable-key.toml).
      if (quoted_key && static_cast<unsigned char>(c) >= 0x80)
        return fmt::format("{}:{}: a non-ASCII character in a key (settings' keys are ASCII); remove the character",
                           line, col);
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
    if (c == '[' && line_start) ++entries;
    if (c != ' ' && c != '\t') line_start = false;
    if (c == '#') {
      comment = true;
    } else if (c == '=') {
      if (in_key) ++entries;
      in_key = false;
    } else if ((c == '"' || c == '\'') &&
               (i == 0 || std::strchr(" \t=[{,.", t[i - 1]) != nullptr || t[i - 1] == '\n')) {
      // A quote starts a string only where a token starts: inside a bare token (key"x) it is
      // part of the token for toml++, which then reads on past it.
      quote = c;
      quoted_key = in_key;
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

namespace {

// Reads and parses the policy file at `path` (`shown` as messages print it) into `tbl`;
// false after `error` was told why not.
bool read_policy_file(const std::string& path, const std::string& shown, const char* named_by, toml::table& tbl,
                      const std::function<void(std::string)>& error) {
  try {
    // Bounded and non-blocking (symbols/bounded_read.h): a FIFO named here hung every
    // preloaded process at load, /dev/zero read until bad_alloc.
    auto read = symbols::read_regular(path, kPolicyFileLimit);
    if (!read) {
      error(fmt::format("{}; {} a regular TOML file of at most {}", printable(read.error()),
                        named_by ? fmt::format("{} must name", named_by) : std::string("a policy file is"),
                        symbols::size_text(kPolicyFileLimit)));
      return false;
    }
    std::string_view text = read.value();
    // A UTF-8 byte order mark, as some Windows editors write one: TOML 1.0 does not allow it, but
    // it carries no meaning, and refusing it would stop jobs over an invisible character.
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    size_t entries = 0;
    if (const std::string bad = non_ascii_outside_strings(text, entries); !bad.empty()) {
      error(fmt::format("{}:{}", shown, bad));
      return false;
    }
    // Parsing costs every preloaded process its time: a file of a hundred thousand keys took
    // 0.3-0.6 s per process. A policy sets at most kSettings keys.
    if (entries > kPolicyEntryLimit) {
      error(fmt::format("{}: holds {} keys and section headers, more than the {} a policy file may (there are {} "
                        "settings): not parsed; is this the policy file?",
                        shown, entries, kPolicyEntryLimit, kSettings));
      return false;
    }
    tbl = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    error(fmt::format("{}: {}", where(shown, e.source()), printable(e.description())));
    return false;
  } catch (const std::exception& e) {
    error(fmt::format("{}: cannot be read: {}", shown, printable(e.what())));
    return false;
  }
  return true;
}

// A key of a policy file that sets nothing, where it is; formatted only when it is listed.
struct KeyError {
  toml::source_position at;
  enum { message, unknown_key, not_a_section } kind;
  std::string_view section, key;
  std::string text;  // kind == message
};

// Sets every known key of `tbl` (an admin file may lock, a user file may not pass a lock) and
// returns the keys that set nothing, in the file's order.
std::vector<KeyError> set_keys(LoadResult& r, const toml::table& tbl, const std::string& shown, bool admin) {
  const bool locked = !admin && r.policy.settings.locked;
  const std::string lock_origin = r.policy.origin[static_cast<int>(Setting::LOCKED)];
  // Every key must be a known setting: a typo must not silently do nothing. The errors are
  // listed in the file's order (a table iterates in key order); an unknown key is formatted
  // only when it is listed: a file may hold a hundred thousand of them.
  std::vector<KeyError> key_errors;
  for (auto&& [section, node] : tbl) {
    const auto* sub = node.as_table();
    if (sub == nullptr) {
      key_errors.push_back({node.source().begin, KeyError::not_a_section, section.str(), {}, {}});
      continue;
    }
    for (auto&& [key, value] : *sub) {
      const std::string full_key = std::string(section.str()) + "." + std::string(key.str());
      int found = -1;
      for (int i = 0; i < kSettings && found < 0; ++i)
        if (full_key == kSettingRows[i].toml_key) found = i;
      if (found < 0) {
        key_errors.push_back({value.source().begin, KeyError::unknown_key, section.str(), key.str(), {}});
        continue;
      }
      if (!admin && found == static_cast<int>(Setting::LOCKED) && locked) continue;
      if (const char* kind = toml_non_scalar(value)) {
        key_errors.push_back({value.source().begin, KeyError::message, {}, {},
                              fmt::format("{}: {} is {}, not a value: use {}", where(shown, value.source()), full_key,
                                          kind, kSettingRows[found].type_info().accepted)});
        continue;
      }
      Message m = set_value(r, found, toml_text(value), where(shown, value.source()), true, locked, lock_origin);
      if (m.kind == Message::error) key_errors.push_back({value.source().begin, KeyError::message, {}, {}, std::move(m.text)});
      else if (m.kind == Message::warning) r.warnings.push_back(std::move(m.text));
    }
  }
  std::stable_sort(key_errors.begin(), key_errors.end(), [](const KeyError& a, const KeyError& b) {
    return a.at.line != b.at.line ? a.at.line < b.at.line : a.at.column < b.at.column;
  });
  return key_errors;
}

}  // namespace

void apply_file(LoadResult& r, const std::string& path, bool admin, const char* named_by) {
  const std::string shown = printable(path);  // the path as messages print it
  // The first `listed_per_file` errors of this file are kept, the rest counted.
  std::size_t listed = 0;
  auto full = [&] { return listed >= r.listed_per_file; };
  auto error = [&](std::string msg) {
    if (r.errors.empty() && r.unlisted_errors == 0) r.first_error_file = shown;
    if (full()) return void(++r.unlisted_errors);
    r.errors.push_back(std::move(msg));
    ++listed;
  };
  toml::table tbl;
  if (!read_policy_file(path, shown, named_by, tbl, error)) return;
  std::vector<KeyError> key_errors = set_keys(r, tbl, shown, admin);
  for (KeyError& e : key_errors) {
    if (full()) {
      ++r.unlisted_errors;
      continue;
    }
    const std::string at = fmt::format("{}:{}:{}", shown, e.at.line, e.at.column);
    if (e.kind == KeyError::unknown_key) {
      const std::string key = std::string(e.section) + "." + std::string(e.key);
      e.text = fmt::format("{}: unknown setting '{}'{} (see `cudashim options` for the list)", at, printable(key, 64),
                           closest_keys(key));
    }
    else if (e.kind == KeyError::not_a_section)
      e.text = fmt::format("{}: '{}' is not a section; settings live in [output], [memory], [framework], [policy]", at,
                           printable(e.section, 64));
    error(std::move(e.text));
  }
}

bool LoadResult::stop() const { return !errors.empty() && policy.settings.on_invalid != OnInvalid::warn; }

std::vector<std::string> LoadResult::error_lines() const {
  std::vector<std::string> out = errors;
  if (unlisted_errors != 0)
    out.push_back(fmt::format("... and {} more error{} (`cudashim policy check {}` lists them all)", unlisted_errors,
                              unlisted_errors == 1 ? "" : "s", first_error_file));
  return out;
}

std::string LoadResult::stop_line() const {
  const std::size_t more = errors.size() - 1 + unlisted_errors;
  const std::string and_more = more == 0 ? std::string() : fmt::format(" (and {} more)", more);
  if (first_error_is_variable)
    return fmt::format("invalid setting: {}{}; stopping at the first CUDA call (exit 78) rather than run without the "
                       "limit: fix or unset {}, or set policy.on_invalid = \"warn\" (CUDASHIM_ON_INVALID=warn)",
                       errors.front(), and_more, first_error_file);
  return fmt::format("invalid policy: {}{}; stopping at the first CUDA call (exit 78): fix the file (`cudashim policy "
                     "check {}` lists every error) or set policy.on_invalid = \"warn\" in it",
                     errors.front(), and_more, first_error_file);
}

LoadResult load_policy(const char* (*getenv_fn)(const char*), const std::string& admin_file,
                       std::size_t listed_per_file) {
  LoadResult r;
  r.listed_per_file = listed_per_file;
  for (int i = 0; i < kSettings; ++i) {
    r.policy.text[i] = kSettingRows[i].default_value;
    r.policy.origin[i] = "default";
  }
  struct stat st {};
  if (!admin_file.empty() && stat(admin_file.c_str(), &st) == 0) apply_file(r, admin_file, true);
  const char* user = getenv_fn("CUDASHIM_POLICY");
  if (user != nullptr && *user != '\0') apply_file(r, user, false, "CUDASHIM_POLICY");
  const bool locked = r.policy.settings.locked;
  const std::string lock_origin = r.policy.origin[static_cast<int>(Setting::LOCKED)];
  std::vector<Message> enforced;  // bad values of enforcement settings, decided once on_invalid is known
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
        r.policy.settings.policy = raw;  // read as given: "" means no file
        r.policy.text[i] = raw;
        r.policy.origin[i] = var;
      }
      continue;
    }
    Message m = set_value(r, i, raw, var, false, locked, lock_origin);
    if (m.enforced_invalid)
      enforced.push_back(std::move(m));
    else if (m.kind != Message::none)
      r.warnings.push_back(std::move(m.text));
  }
  // An enforcement setting's bad value follows policy.on_invalid, whichever source set it.
  for (Message& m : enforced) {
    if (r.policy.settings.on_invalid == OnInvalid::warn) {
      r.warnings.push_back(std::move(m.text));
      continue;
    }
    if (r.errors.empty() && r.unlisted_errors == 0) {
      r.first_error_file = m.as_error.substr(0, m.as_error.find('='));
      r.first_error_is_variable = true;
    }
    r.errors.push_back(std::move(m.as_error));
  }
  return r;
}

void warn_unknown_variables(LoadResult& r, const char* const* envp) {
  if (envp == nullptr) return;
  constexpr std::string_view kPrefix = "CUDASHIM_";
  std::vector<std::string_view> names;
  for (const SettingRow& row : kSettingRows) names.emplace_back(row.name);
  std::size_t unknown = 0;
  for (const char* const* e = envp; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.substr(0, kPrefix.size()) != kPrefix) continue;
    const std::string_view name = entry.substr(kPrefix.size(), entry.find('=') - kPrefix.size());
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    if (std::any_of(std::begin(kOtherVariables), std::end(kOtherVariables),
                    [&](const OtherVariable& o) { return name == o.name; }))
      continue;
    if (++unknown > kListedUnknownVariables) continue;
    const std::string hint = did_you_mean(name, names, "", kPrefix);
    r.warnings.push_back(fmt::format("CUDASHIM_{}: not a cudashim setting, ignored{} (`cudashim options` lists them)",
                                     printable(name, 64), hint));
  }
  if (unknown > kListedUnknownVariables)
    r.warnings.push_back(fmt::format("... and {} more CUDASHIM_* variables that are not cudashim settings",
                                     unknown - kListedUnknownVariables));
}

std::string describe(const Policy& p) {
  std::string out;
  for (int i = 0; i < kSettings; ++i) {
    const SettingRow& row = kSettingRows[i];
    const std::string key = *row.toml_key ? row.toml_key : std::string("(env) CUDASHIM_") + row.name;
    out += fmt::format("{:<40} = {:<16} # {}\n", key, "\"" + printable(p.text[i]) + "\"", printable(p.origin[i]));
  }
  return out;
}

std::string settings_markdown() {
  std::string out =
      "| Environment | Policy file key | Type | Default | Locked policy | Bad value in the environment | Meaning |\n"
      "|---|---|---|---|---|---|---|\n";
  for (int i = 0; i < kSettings; ++i) {
    const SettingRow& r = kSettingRows[i];
    const Tighten t = r.tighten;
    const char* lock = t == Tighten::any    ? "free"
                       : t == Tighten::min  ? "may only lower"
                       : t == Tighten::rank ? "may only tighten"
                                            : "fixed";
    out += fmt::format("| `CUDASHIM_{}` | {} | {} | `{}` | {} | {} | {} |\n", r.name,
                       *r.toml_key ? fmt::format("`{}`", r.toml_key) : std::string("(environment only)"),
                       r.type_info().name, r.default_value, lock,
                       r.enforces() ? "**enforcement**: follows `policy.on_invalid`" : "warning, value kept", r.doc);
  }
  out += "\n## Memory sizes\n\nA `memsize` is a number (`8`, `1.5`, `1.5e9`; blanks and `_` are ignored) and a unit, "
         "matched without case (`8gib`, `8GiB` and `8GIB` are the same); a number without a unit is bytes, or a "
         "fraction of the device's memory when it is at most 1 and written with a point or an exponent (`0.5`, `1.0`); "
         "`50%` is half the device. The one-letter units are binary, as GNU `ls -h`, `free -h` and Slurm's `--mem` read "
         "them; the two-letter ones without `i` are decimal, as disks count.\n\n"
         "| Unit | Is |\n|---|---|\n";
  for (const MemUnit& u : kMemUnits) out += fmt::format("| `{}` | {} |\n", u.name, u.what);
  out += "\n## Other `CUDASHIM_*` variables\n\nAt its first CUDA call, a process warns once about each `CUDASHIM_*` "
         "variable that is not a setting above, naming the closest settings (`CUDASHIM_MEMCAP`: did you mean "
         "`CUDASHIM_MEM_CAP`?); a process that never uses CUDA says nothing. These variables belong to other parts of "
         "cudashim and are passed by:\n\n| Variable | Read by |\n|---|---|\n";
  for (const OtherVariable& v : kOtherVariables) out += fmt::format("| `CUDASHIM_{}` | {} |\n", v.name, v.who);
  return out;
}

namespace {
Settings* g_process = nullptr;  // never destroyed: the exit path reads it
// The defaults when none were installed, made by the first reader. Not a function-local
// `static const Settings* d = new Settings`: a forked child of a process whose other thread
// was inside that initialization at fork() inherited its guard "in progress" and waited for it
// forever at exit (preload.fork.threads hung in CI; hygiene.guards keeps such statics out).
std::atomic<const Settings*> g_defaults{nullptr};
}  // namespace

const Settings& process_settings() {
  if (g_process != nullptr) return *g_process;
  const Settings* d = g_defaults.load(std::memory_order_acquire);
  if (d != nullptr) return *d;
  auto* fresh = new Settings;
  if (g_defaults.compare_exchange_strong(d, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread's came first
  return *d;
}

void install_process_settings(const Settings& s) {
  if (g_process == nullptr) g_process = new Settings(s);
  else *g_process = s;
}

}  // namespace cudashim::policy
