// catalog/hooks.cpp: exact-name lookup over the hook table, and the texts of its columns.
#include "catalog/hooks.h"

#include <array>

namespace cudashim {
namespace {

// FNV-1a: a cheap, stable hash for symbol names.
constexpr uint32_t fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

constexpr size_t kBuckets = 1024;  // power of two, > 4x the table
static_assert(kBuckets > 2 * kHookCount);

// Open-addressing index built at compile time: bucket -> id+1 (0 = empty).
constexpr std::array<uint16_t, kBuckets> build_index() {
  std::array<uint16_t, kBuckets> idx{};
  for (size_t i = 0; i < kHookCount; ++i) {
    size_t b = fnv1a(kHooks[i].name) & (kBuckets - 1);
    while (idx[b] != 0) b = (b + 1) & (kBuckets - 1);
    idx[b] = static_cast<uint16_t>(i + 1);
  }
  return idx;
}
constexpr auto kIndex = build_index();

// Every exact name appears once: a duplicated row would make two wrappers.
constexpr bool names_unique() {
  for (size_t i = 0; i < kHookCount; ++i)
    for (size_t j = i + 1; j < kHookCount; ++j)
      if (std::string_view(kHooks[i].name) == std::string_view(kHooks[j].name)) return false;
  return true;
}
static_assert(names_unique(), "catalog/hooks.def lists an ABI name twice");

}  // namespace

HookId find_hook(std::string_view name) {
  // Every hooked name starts with "cu" or "__cu"; most dlsym traffic (Python's PyInit_*) does not.
  const size_t skip = name.size() > 2 && name[0] == '_' && name[1] == '_' ? 2 : 0;
  if (name.size() < skip + 3 || name[skip] != 'c' || name[skip + 1] != 'u') return HookId::kCount;
  size_t b = fnv1a(name) & (kBuckets - 1);
  for (size_t probe = 0; probe < kBuckets; ++probe, b = (b + 1) & (kBuckets - 1)) {
    const uint16_t v = kIndex[b];
    if (v == 0) return HookId::kCount;
    if (name == kHooks[v - 1].name) return static_cast<HookId>(v - 1);
  }
  return HookId::kCount;
}

}  // namespace cudashim

namespace cudashim {

const char* rec_kind_text(RecKind k) {
  static constexpr const char* kText[] = {
#define CUDASHIM_REC_KIND(NAME, WHAT) WHAT,
#include "catalog/rec_kinds.def"
  };
  return kText[static_cast<int>(k)];
}

const char* timing_text(Timing t) {
  static constexpr const char* kText[] = {"none", "blocking (wall time, blocked_ns)", "timed (time_ns)"};
  return kText[static_cast<int>(t)];
}

}  // namespace cudashim
