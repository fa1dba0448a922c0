// settings_load.h: one immutable policy per process, built before any CUDA call from
// the defaults, /etc/cudashim/policy.toml, the user's file (CUDASHIM_POLICY) and the
// CUDASHIM_* environment, in that order. Each value is parsed once, here, into the typed
// field of `Settings` its row of catalog/settings.def names; consumers read those fields.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "catalog/settings.h"

namespace cudashim::policy {

// Every setting as its typed value: one field per row of catalog/settings.def, named by
// its `field` column (settings.mem_cap is CUDASHIM_MEM_CAP, a MemSize).
struct Settings {
#define CUDASHIM_SETTING(TYPE, NAME, field, key, def, tighten, role, doc) setting_field_t<SettingType::TYPE> field{};
#include "catalog/settings.def"
#undef CUDASHIM_SETTING
  // The table's defaults.
  Settings();
};

// A value a policy file or the environment gave and that was not taken: a locked policy
// refused the change, or the value was not valid and the setting kept what it had.
struct Refusal {
  Setting setting = Setting::kCount;
  std::string value;  // as given (printable, at most 64 characters)
  std::string from;   // "<file>:<line>:<col>" or "CUDASHIM_<NAME>"
  std::string why;    // "would loosen it from 'deny' to 'allow' (the policy locked by /etc/cudashim/policy.toml:2:10)",
                      // "not valid: use allow, warn, deny"
  std::string kept;   // the value in force instead
};

// The effective settings and, for each, how it is written out and where it came from.
struct Policy {
  Settings settings;              // what consumers read
  std::string text[kSettings];    // each value as `policy check` and the report show it (normalized)
  std::string origin[kSettings];  // "default", "<file>:<line>:<col>" or "CUDASHIM_<NAME>"
  std::vector<Refusal> refused;   // in the order they were met (the report's policy.refused)
  const std::string& text_of(Setting s) const { return text[static_cast<int>(s)]; }
  const std::string& origin_of(Setting s) const { return origin[static_cast<int>(s)]; }
};

// The most bytes a policy file may hold, and the most keys and section headers. Every preloaded
// process reads and parses the policy at load, CUDA or not, so both bound what that may cost
// (toml++ parsed 1 MiB of comments in about 0.1 s, 100,000 keys in 0.3-0.6 s, per process, on
// the 2-core VM); a policy of every setting with comments is a few KiB. A FIFO, a device, a
// directory or a larger file is an error of that file, never read on.
inline constexpr std::size_t kPolicyFileLimit = 64u << 10;
inline constexpr std::size_t kPolicyEntryLimit = 256;
// The errors a process lists per policy file; the rest are counted ("... and K more"): a
// file of 300,000 unknown keys must not print megabytes into every job's stderr.
inline constexpr std::size_t kListedErrorsPerFile = 10;

struct LoadResult {
  Policy policy;
  std::vector<std::string> warnings;  // bad environment values, refused loosening of a locked policy
  std::vector<std::string> errors;    // malformed policy files, as "<file>:<line>:<col>: <what>", the first
                                      // `listed_per_file` of each file
  std::size_t unlisted_errors = 0;    // the errors past those, counted only
  std::string first_error_file;       // the file the first error is in, or the variable (CUDASHIM_MEM_CAP)
  bool first_error_is_variable = false;  // the first error is a bad value of an enforcement variable
  std::size_t listed_per_file = kListedErrorsPerFile;
  bool stop() const;                  // errors and policy.on_invalid = fail: exit 78 at the first CUDA call
  // The errors as printed: each listed one, then "... and K more" when some were not listed.
  std::vector<std::string> error_lines() const;
  // The one line a process stopped for a malformed policy prints: the first error, how many
  // more there are, what to do. pre: !errors.empty().
  std::string stop_line() const;
};

// Builds the process policy. `getenv_fn` is std::getenv in the shim, a map in tests;
// `listed_per_file` bounds LoadResult::errors per file (`cudashim policy check` lists all).
LoadResult load_policy(const char* (*getenv_fn)(const char*), const std::string& admin_file = "/etc/cudashim/policy.toml",
                       std::size_t listed_per_file = kListedErrorsPerFile);

// The unknown CUDASHIM_* variables warned about one by one; the rest are counted.
inline constexpr std::size_t kListedUnknownVariables = 5;

// Adds to `r.warnings` one line per variable of `envp` (an environ block; nullptr: none)
// named CUDASHIM_* that is neither a setting nor one of kOtherVariables, with the closest
// setting names (policy/did_you_mean.h): a misspelled CUDASHIM_MEMCAP is never silently
// ignored. The shim passes nothing in a setuid process (it reads no CUDASHIM_* there).
void warn_unknown_variables(LoadResult& r, const char* const* envp);

// Applies one TOML file on top of `r.policy` (for `cudashim policy check FILE`). `named_by` is the
// variable that named the file ("CUDASHIM_POLICY"), for the message when it cannot be read.
void apply_file(LoadResult& r, const std::string& path, bool admin, const char* named_by = nullptr);

// Parses a memory size ("8GiB", "512 MiB", "1.5e9", "1073741824", "0.5", "50%").
// Returns false for anything else.
bool parse_memsize(const std::string& text, MemSize& out);

// Parses `raw` as the value of setting `s` into its field of `out` and `normalized` (the
// text `policy check` shows). Returns false, changing neither, when `raw` is not one.
bool parse_setting(Setting s, const std::string& raw, Settings& out, std::string& normalized);

// The effective policy as "key = value  # origin" lines.
std::string describe(const Policy& p);

// The settings table as Markdown (docs/options.md).
std::string settings_markdown();

// The settings of this process: those installed at start-up by the shim, the table's
// defaults until then. pre: installed before a second thread runs.
const Settings& process_settings();
void install_process_settings(const Settings& s);

}  // namespace cudashim::policy
