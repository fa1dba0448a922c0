// did_you_mean.h: the one rule that turns a mistyped name into a suggestion: the CLI's
// commands and options, the CUDASHIM_* variables, a policy file's keys.
//
// The rule: the distance between two names is the optimal-string-alignment edit distance
// (an insertion, a deletion, a substitution or a swap of two neighbours costs 1), letters
// compared without case. A candidate is suggested when its distance is at most
// 1 + (its length) / 4 (`doctr` -> `doctor`, `MEMCAP` -> `MEM_CAP`, `--ouy` -> `--out`), or
// when the typed name is a prefix of it at least 3 characters long (`rep` -> `report`, which
// counts as distance 1); the closest ones are kept, at most three, in the candidates' order.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cudashim::policy {

// Returns the edit distance of `a` and `b` (see above), letters compared without case.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Returns the candidates the rule above suggests for `typed`, closest first; none when none is
// close. A candidate equal to `typed` is not suggested (it is not a typo).
std::vector<std::string_view> closest_names(std::string_view typed, const std::vector<std::string_view>& candidates);

// Returns "; did you mean 'a'?" (or "'a' or 'b'?") with `quote` around each suggestion and
// `prefix` before it (names compared without it: "CUDASHIM_"), or "" when there is none.
std::string did_you_mean(std::string_view typed, const std::vector<std::string_view>& candidates,
                         std::string_view quote = "'", std::string_view prefix = "");

// Returns "; did you mean 'a'?" (or "'a' or 'b'?") for `names` as given, or "" for none.
std::string suggestion_text(const std::vector<std::string_view>& names, std::string_view quote = "'",
                            std::string_view prefix = "");

}  // namespace cudashim::policy
