// options.cpp: parsing the CUDASHIM_* table.
#include "policy/options.h"

#include <fmt/format.h>

#include <cstring>

namespace cudashim::policy {

const OptionRow kOptionRows[] = {
#define CUDASHIM_OPTION(type, NAME, def, doc) {#type, #NAME, def, doc},
#include "policy/options.def"
#undef CUDASHIM_OPTION
};
const int kOptionCount = sizeof kOptionRows / sizeof kOptionRows[0];

namespace {

constexpr const char* kLevels[] = {"off", "error", "warn", "info", "debug"};

// Normalizes a boolean spelling to "1"/"0"; returns false for anything else.
bool parse_bool(std::string_view v, std::string& out) {
  static constexpr const char* kTrue[] = {"1", "true", "yes", "on", "TRUE", "True", "YES", "ON"};
  static constexpr const char* kFalse[] = {"0", "false", "no", "off", "FALSE", "False", "NO", "OFF"};
  for (const char* t : kTrue)
    if (v == t) return out = "1", true;
  for (const char* f : kFalse)
    if (v == f) return out = "0", true;
  return false;
}

bool parse_level(std::string_view v, std::string& out) {
  for (const char* l : kLevels)
    if (v == l) return out = l, true;
  if (v == "warning") return out = "warn", true;
  return false;
}

// Returns the value to store for one row, or an error message.
bool parse_value(const OptionRow& row, std::string_view raw, std::string& out, std::string& why) {
  const std::string_view type = row.type;
  if (type == "bool") {
    if (parse_bool(raw, out)) return true;
    why = "is not a boolean (use 1 or 0)";
    return false;
  }
  if (type == "loglevel") {
    if (parse_level(raw, out)) return true;
    why = "is not a log level (use off, error, warn, info or debug)";
    return false;
  }
  if (raw.empty()) {
    why = "is empty";
    return false;
  }
  if (raw.size() > 4000 || raw.find('\n') != std::string_view::npos) {
    why = "is not a usable path (too long, or has a newline)";
    return false;
  }
  out = raw;
  return true;
}

}  // namespace

int Options::log_level() const {
  for (int i = 0; i < 5; ++i)
    if (LOG_LEVEL == kLevels[i]) return i - 1;
  return 1;
}

Options parse_options(const char* (*getenv_fn)(const char*), std::vector<std::string>& errors) {
  Options o;
  std::string* fields[] = {
#define CUDASHIM_OPTION(type, NAME, def, doc) &o.NAME,
#include "policy/options.def"
#undef CUDASHIM_OPTION
  };
  for (int i = 0; i < kOptionCount; ++i) {
    const OptionRow& row = kOptionRows[i];
    *fields[i] = row.default_value;
    const std::string var = std::string("CUDASHIM_") + row.name;
    const char* raw = getenv_fn(var.c_str());
    if (raw == nullptr) continue;
    std::string value, why;
    if (parse_value(row, raw, value, why)) {
      *fields[i] = value;
    } else {
      std::string shown(raw, strnlen(raw, 64));
      errors.push_back(fmt::format("{}='{}' {}; using the default '{}'", var, shown, why, row.default_value));
    }
  }
  return o;
}

std::string options_markdown() {
  std::string out = "| Variable | Type | Default | Meaning |\n|---|---|---|---|\n";
  for (int i = 0; i < kOptionCount; ++i) {
    const OptionRow& r = kOptionRows[i];
    out += fmt::format("| `CUDASHIM_{}` | {} | `{}` | {} |\n", r.name, r.type, r.default_value, r.doc);
  }
  return out;
}

}  // namespace cudashim::policy
