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
    {"memsize", "bytes with a unit (8GiB, 512MiB, 1.5e9) or a fraction of the device's memory (0.5 or 50%)", nullptr, 0},
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

// Setting: one id per row, in table order.
enum class Setting : int {
#define CUDASHIM_SETTING(TYPE, NAME, field, key, def, tighten, doc) NAME,
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
  const char* doc;
  constexpr const SettingTypeInfo& type_info() const { return setting_type_info(type); }
};
inline constexpr SettingRow kSettingRows[kSettings] = {
#define CUDASHIM_SETTING(TYPE, NAME, field, key, def, tighten, doc) \
  {SettingType::TYPE, #NAME, #field, key, def, Tighten::tighten, doc},
#include "catalog/settings.def"
#undef CUDASHIM_SETTING
};
// Returns the row of `s`. pre: s < kCount.
constexpr const SettingRow& setting_row(Setting s) { return kSettingRows[static_cast<int>(s)]; }

// `rank` compares an order (flags and enums), `min` a size: the table cannot say otherwise.
#define CUDASHIM_SETTING(TYPE, NAME, field, key, def, tighten, doc)                                          \
  static_assert(Tighten::tighten != Tighten::rank || SettingType::TYPE == SettingType::flag ||              \
                    setting_type_info(SettingType::TYPE).word_count != 0,                                    \
                "settings.def: " #NAME " is ranked but has no order");                                     \
  static_assert(Tighten::tighten != Tighten::min || SettingType::TYPE == SettingType::memsize,              \
                "settings.def: " #NAME " may only be lowered but is not a memsize");
#include "catalog/settings.def"
#undef CUDASHIM_SETTING

}  // namespace cudashim
