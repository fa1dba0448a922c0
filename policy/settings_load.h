// settings_load.h: one immutable policy per process, built before any CUDA call from
// the defaults, /etc/cudashim/policy.toml, the user's file (CUDASHIM_POLICY) and
// the CUDASHIM_* environment, in that order (settings.def is the table).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace cudashim::policy {

struct SettingRow {
  const char* type;
  const char* name;      // CUDASHIM_<name>
  const char* toml_key;  // "" = environment only
  const char* default_value;
  const char* tighten;   // any, min, rank, fixed
  const char* doc;
};
extern const SettingRow kSettingRows[];
extern const int kSettingCount;

enum class Setting : int {
#define CUDASHIM_SETTING(type, NAME, key, def, tighten, doc) NAME,
#include "policy/settings.def"
#undef CUDASHIM_SETTING
  kCount
};
inline constexpr int kSettings = static_cast<int>(Setting::kCount);

// A memory size: bytes, or a fraction of the device's memory; neither = unset.
struct MemSize {
  uint64_t bytes = 0;
  double fraction = 0;
  bool set() const { return bytes != 0 || fraction != 0; }
  // Returns the size in bytes for a device of `total` bytes.
  uint64_t resolve(uint64_t total) const { return bytes ? bytes : static_cast<uint64_t>(fraction * static_cast<double>(total)); }
};

enum class Managed { allow, warn, deny };

struct Policy {
  std::string value[kSettings];   // normalized text of each setting
  std::string origin[kSettings];  // "default", "<file>:<line>:<col>" or "CUDASHIM_<NAME>"

  const std::string& get(Setting s) const { return value[static_cast<int>(s)]; }
  bool flag(Setting s) const { return get(s) == "1"; }
  int log_level() const;  // -1 off, 0 error, 1 warn, 2 info, 3 debug
  MemSize mem_cap() const;
  Managed managed() const;
};

struct LoadResult {
  Policy policy;
  std::vector<std::string> warnings;  // bad environment values, refused loosening of a locked policy
  std::vector<std::string> errors;    // malformed policy files, as "<file>:<line>:<col>: <what>"
  bool stop() const;                  // errors and policy.on_invalid = fail: exit 78 before CUDA work
};

// Builds the process policy. `getenv_fn` is std::getenv in the shim, a map in tests.
LoadResult load_policy(const char* (*getenv_fn)(const char*), const std::string& admin_file = "/etc/cudashim/policy.toml");

// Applies one TOML file on top of `r.policy` (for `cudashim policy check FILE`).
void apply_file(LoadResult& r, const std::string& path, bool admin);

// Parses a memory size ("8GiB", "512 MiB", "1.5e9", "1073741824", "0.5", "50%").
// Returns false for anything else.
bool parse_memsize(const std::string& text, MemSize& out);

// The effective policy as "key = value  # origin" lines.
std::string describe(const Policy& p);

// The settings table as Markdown (docs/options.md).
std::string settings_markdown();

}  // namespace cudashim::policy
