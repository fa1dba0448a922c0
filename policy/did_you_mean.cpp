// did_you_mean.cpp: the suggestion rule of did_you_mean.h.
#include "policy/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace cudashim::policy {

namespace {
char fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
// Names longer than this are compared as if cut there: the table is O(n*m).
constexpr std::size_t kLongest = 128;
}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  a = a.substr(0, kLongest), b = b.substr(0, kLongest);
  const std::size_t n = a.size(), m = b.size();
  // Three rows of the table: the one before the previous (for swaps), the previous, this one.
  std::vector<std::size_t> before(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]))
        cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::vector<std::string_view> closest_names(std::string_view typed, const std::vector<std::string_view>& candidates) {
  auto is_prefix = [&](std::string_view c) {
    if (typed.size() < 3 || typed.size() >= c.size()) return false;
    for (std::size_t i = 0; i < typed.size(); ++i)
      if (fold(typed[i]) != fold(c[i])) return false;
    return true;
  };
  std::size_t best = static_cast<std::size_t>(-1);
  std::vector<std::pair<std::size_t, std::string_view>> scored;
  for (std::string_view c : candidates) {
    if (c == typed) continue;
    std::size_t d = edit_distance(typed, c);
    if (d > 1 + c.size() / 4) {
      if (!is_prefix(c)) continue;
      d = 1;  // a prefix ranks with the closest typos
    }
    scored.emplace_back(d, c);
    best = std::min(best, d);
  }
  std::vector<std::string_view> out;
  for (const auto& [d, c] : scored)
    if (d == best && out.size() < 3 && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  return out;
}

std::string suggestion_text(const std::vector<std::string_view>& names, std::string_view quote, std::string_view prefix) {
  if (names.empty()) return "";
  std::string out = "; did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? " or " : ", ";
    out.append(quote).append(prefix).append(names[i]).append(quote);
  }
  return out + "?";
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string_view>& candidates, std::string_view quote,
                         std::string_view prefix) {
  return suggestion_text(closest_names(typed, candidates), quote, prefix);
}

}  // namespace cudashim::policy
