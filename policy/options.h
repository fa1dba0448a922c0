// options.h: the CUDASHIM_* environment options, parsed once into one value.
#pragma once
#include <string>
#include <vector>

namespace cudashim::policy {

struct Options {
#define CUDASHIM_OPTION(type, NAME, def, doc) std::string NAME;
#include "policy/options.def"
#undef CUDASHIM_OPTION
  // Typed views of the rows above.
  bool disable() const { return DISABLE == "1"; }
  bool report() const { return REPORT == "1"; }
  int log_level() const;  // -1 off, 0 error, 1 warn, 2 info, 3 debug
};

struct OptionRow {
  const char* type;
  const char* name;  // without the CUDASHIM_ prefix
  const char* default_value;
  const char* doc;
};
extern const OptionRow kOptionRows[];
extern const int kOptionCount;

// Parses the options from `getenv_fn` (std::getenv in the shim, a map in tests).
// Bad values fall back to the documented default and add one message to `errors`
// that names the variable, the value and what is accepted. Never throws.
Options parse_options(const char* (*getenv_fn)(const char*), std::vector<std::string>& errors);

// Returns the options table as Markdown (docs/options.md, `cudashim options --markdown`).
std::string options_markdown();

}  // namespace cudashim::policy
