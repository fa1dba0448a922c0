// catalog/settings.h: the settings table (catalog/settings.def) as data: ids, types, the
// words of each enum-typed setting, how a locked policy governs each. No state and no
// parsing: the policy layer parses every value once (policy/settings_load.h) into the
// field of `Settings` whose C++ type the row's TYPE names here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <type_traits>

namespace cudashim {

// A memory size (TYPE memsize): bytes, or a fraction of the device's memory; neither = unset.
struct MemSize {
  uint64_t bytes = 0;
  double fraction = 0;
  bool set() const { return bytes != 0 || fraction != 0; }
  // Returns the size in bytes for a device of `total` bytes.
  uint64_t resolve(uint64_t total) const { return bytes ? bytes : static_cast<uint64_t>(fraction * static_cast<double>(total)); }
};

// The enum-typed settings. Each enumerator is the index of its word in the k...Words array
// below, loosest first: a locked policy's `rank` compares these numbers.
enum class LogThreshold : uint8_t { off, error, warn, info, debug };  // CUDASHIM_LOG_LEVEL
enum class Managed : uint8_t { allow, warn, deny };                   // CUDASHIM_MANAGED
enum class ModuleLoading : uint8_t { unset, lazy, eager };            // CUDASHIM_MODULE_LOADING
enum class OnInvalid : uint8_t { warn, fail };                        // CUDASHIM_ON_INVALID
inline constexpr const char* kLogThresholdWords[] = {"off", "error", "warn", "info", "debug"};
inline constexpr const char* kManagedWords[] = {"allow", "warn", "deny"};
inline constexpr const char* kModuleLoadingWords[] = {"", "LAZY", "EAGER"};
inline constexpr const char* kOnInvalidWords[] = {"warn", "fail"};

// The units of a memory size (TYPE memsize), matched without case ("8gib" is 8 GiB): B, the
// decimal KB/MB/GB/TB (powers of 1000, as disks and `ls --si` count), the binary KiB/MiB/GiB/TiB
// and their one-letter forms K/M/G/T (powers of 1024, as GNU `ls -h`, `free -h` and Slurm's
// --mem read them). A number without a unit is bytes, or a fraction of the
// device's memory when it is at most 1 and written with a point or an exponent (0.5, 1.0).
struct MemUnit {
  const char* name;  // as docs/options.md writes it
  double bytes;      // what one of it is
  const char* what;  // "10^9 bytes"
};
inline constexpr MemUnit kMemUnits[] = {
    {"B", 1, "1 byte"},
    {"KB", 1e3, "10^3 bytes"},         {"MB", 1e6, "10^6 bytes"},
    {"GB", 1e9, "10^9 bytes"},         {"TB", 1e12, "10^12 bytes"},
    {"KiB", 1024.0, "2^10 bytes"},     {"MiB", 1048576.0, "2^20 bytes"},
    {"GiB", 1073741824.0, "2^30 bytes"}, {"TiB", 1099511627776.0, "2^40 bytes"},
    {"K", 1024.0, "2^10 bytes (KiB)"}, {"M", 1048576.0, "2^20 bytes (MiB)"},
    {"G", 1073741824.0, "2^30 bytes (GiB)"}, {"T", 1099511627776.0, "2^40 bytes (TiB)"},
};

// CUDASHIM_* variables that are not settings of the shim but are read by other parts of
// cudashim: an unknown-variable warning (policy/settings_load.h) passes them by.
struct OtherVariable {
  const char* name;  // CUDASHIM_<name>
  const char* who;   // what reads it
};
inline constexpr OtherVariable kOtherVariables[] = {
    {"LIB", "`cudashim run` and the deploy scripts: the path of libcudashim.so"},
    {"HOME", "deploy/slurm/train.sbatch: where the wheel was installed"},
    {"SLURM_OUT_BASE", "deploy/slurm/task_prolog.sh: the node's folder for reports"},
    {"NO_PRELOAD", "deploy/slurm/task_prolog.sh: 1 opts a job out of the preload"},
    {"CUDA_INCLUDE", "the wheel's build backend: the folder of cuda.h"},
    {"WHEEL_BUILD", "the wheel's build backend: its CMake build folder"},
    {"TEST_HOOK_NAMES", "the test suite's driver double"},
    {"HTML_SHOT", "tests/cli/html_report.py: where the page's screenshot goes"},
    {"FUZZ_SEED", "tests/fuzz/run_fuzz.py: the fuzzers' seed"},
    {"OLD_MIRROR", "scripts/old_userland.sh: the Debian mirror of the old-glibc test"},
};

// The spellings a flag accepts; the first of each list is how it is written back.
inline constexpr const char* kFlagOnWords[] = {"1", "true", "yes", "on", "TRUE", "True", "YES", "ON"};
inline constexpr const char* kFlagOffWords[] = {"0", "false", "no", "off", "FALSE", "False", "NO", "OFF"};
// The largest value of a count.
inline constexpr uint64_t kCountMax = 1000000000;
// The longest value of a path or a text setting, in bytes (each is one line).
inline constexpr size_t kLineMax = 4000;

// What a setting's value is (the TYPE column): how it is parsed and its field's C++ type.
enum class SettingType : uint8_t { flag, count, memsize, path, text, log_level, managed, module_loading, on_invalid };

struct SettingTypeInfo {
  const char* name;          // as docs/options.md shows it
  const char* accepted;      // what a message about a bad value says is accepted
  const char* const* words;  // an enum's words, loosest first; nullptr for other types
  size_t word_count;
};
inline constexpr SettingTypeInfo kSettingTypes[] = {
    {"bool", "1 or 0 (true/false, yes/no, on/off)", nullptr, 0},
    {"count", "a whole number from 0 to 1000000000", nullptr, 0},
    {"memsize",
     "a number of bytes with a unit, any case: B, KB/MB/GB/TB (powers of 1000), KiB/MiB/GiB/TiB or K/M/G/T (powers of "
     "1024), as in 8GiB, 512mb, 1.5e9; or a fraction of the device's memory (0.5 or 50%)",
     nullptr, 0},
    {"path", "one non-empty line of at most 4000 characters", nullptr, 0},
    {"string", "one line of at most 4000 characters", nullptr, 0},
    {"loglevel", "off, error, warn, info or debug", kLogThresholdWords, std::size(kLogThresholdWords)},
    {"choice:allow/warn/deny", "allow, warn, deny", kManagedWords, std::size(kManagedWords)},
    {"choice:/LAZY/EAGER", "\"\" (unset), LAZY, EAGER", kModuleLoadingWords, std::size(kModuleLoadingWords)},
    {"choice:warn/fail", "warn, fail", kOnInvalidWords, std::size(kOnInvalidWords)},
};
// Returns the facts of type `t`.
constexpr const SettingTypeInfo& setting_type_info(SettingType t) { return kSettingTypes[static_cast<int>(t)]; }

// The C++ type of a field of TYPE `T`.
template <SettingType T> struct SettingField;
template <> struct SettingField<SettingType::flag> { using type = bool; };
template <> struct SettingField<SettingType::count> { using type = uint64_t; };
template <> struct SettingField<SettingType::memsize> { using type = MemSize; };
template <> struct SettingField<SettingType::path> { using type = std::string; };
template <> struct SettingField<SettingType::text> { using type = std::string; };
template <> struct SettingField<SettingType::log_level> { using type = LogThreshold; };
template <> struct SettingField<SettingType::managed> { using type = Managed; };
template <> struct SettingField<SettingType::module_loading> { using type = ModuleLoading; };
template <> struct SettingField<SettingType::on_invalid> { using type = OnInvalid; };
template <SettingType T> using setting_field_t = typename SettingField<T>::type;

// Returns the word of an enum-typed setting's value (as written in files and the report).
template <typename E>
constexpr const char* setting_word(E value) {
  if constexpr (std::is_same_v<E, LogThreshold>) return kLogThresholdWords[static_cast<int>(value)];
  else if constexpr (std::is_same_v<E, Managed>) return kManagedWords[static_cast<int>(value)];
  else if constexpr (std::is_same_v<E, ModuleLoading>) return kModuleLoadingWords[static_cast<int>(value)];
  else return kOnInvalidWords[static_cast<int>(value)];
}

// How a locked administrator policy may be changed by the environment or a user file.
enum class Tighten : uint8_t { any, min, rank, fixed };

// What a bad value of a setting does (the role column of settings.def): `enforce` settings hold
// the job to a limit, so a value that does not parse is an error under policy.on_invalid, never
// a silent fallback to "no limit"; a bad `plain` environment value is one warning.
enum class SettingRole : uint8_t { plain, enforce };

// Setting: one id per row, in table order.
enum class Setting : int {
#define CUDASHIM_SETTING(TYPE, NAME, field, key, def, tighten, role, doc) NAME,
#include "catalog/settings.def"
#undef CUDASHIM_SETTING
  kCount
};
inline constexpr int kSettings = static_cast<int>(Setting::kCount);

struct SettingRow {
  SettingType type;
  const char* name;      // CUDASHIM_<name>
  const char* field;     // the member of Settings (policy/settings_load.h)
  const char* toml_key;  // "" = environment only
  const char* default_value;
  Tighten tighten;
  SettingRole role;
  const char* doc;
  constexpr bool enforces() const { return role == SettingRole::enforce; }
  constexpr const SettingTypeInfo& type_info() const { return setting_type_info(type); }
};
inline constexpr SettingRow kSettingRows[kSettings] = {
#define CUDASHIM_SETTING(TYPE, NAME, field, key, def, tighten, role, doc) \
  {SettingType::TYPE, #NAME, #field, key, def, Tighten::tighten, SettingRole::role, doc},
#include "catalog/settings.def"
#undef CUDASHIM_SETTING
};
// Returns the row of `s`. pre: s < kCount.
constexpr const SettingRow& setting_row(Setting s) { return kSettingRows[static_cast<int>(s)]; }

// `rank` compares an order (flags and enums), `min` a size: the table cannot say otherwise.
#define CUDASHIM_SETTING(TYPE, NAME, field, key, def, tighten, role, doc)                                          \
  static_assert(Tighten::tighten != Tighten::rank || SettingType::TYPE == SettingType::flag ||              \
                    setting_type_info(SettingType::TYPE).word_count != 0,                                    \
                "settings.def: " #NAME " is ranked but has no order");                                     \
  static_assert(Tighten::tighten != Tighten::min || SettingType::TYPE == SettingType::memsize,              \
                "settings.def: " #NAME " may only be lowered but is not a memsize");
#include "catalog/settings.def"
#undef CUDASHIM_SETTING

}  // namespace cudashim
