// rank_compare.cpp: cross-rank comparison.
#include "tools/rank_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "tools/input_files.h"

namespace cudashim::tools {
namespace {

struct Rank {
  int64_t rank;
  std::string host;
  int64_t pid;
  uint64_t peak = 0, blocked = 0, wall = 0;
  std::set<std::string> libraries;  // "family file"
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

RankComparison compare_ranks(const std::vector<LoadedReport>& reports) {
  std::vector<Rank> ranks;
  for (const auto& r : reports) {
    const auto* d = std::get_if<ProcessReport>(&r.what);
    if (d == nullptr || !d->rank) continue;
    Rank k{*d->rank, shown(d->host), d->pid, 0, d->blocked_ns, d->wall_ns, {}};
    for (const DeviceMemory& dev : d->devices) k.peak = std::max(k.peak, dev.peak_bytes);
    for (const LoadedLibrary& l : d->libraries) k.libraries.insert(shown(l.family) + " " + shown(l.file));
    ranks.push_back(std::move(k));
  }
  RankComparison out;
  if (ranks.size() < 2) return out;
  std::sort(ranks.begin(), ranks.end(), [](const Rank& a, const Rank& b) { return a.rank < b.rank; });
  std::vector<double> peaks, blocked;
  std::map<std::set<std::string>, int> sets;
  for (const auto& k : ranks) peaks.push_back(k.peak), blocked.push_back(k.blocked), sets[k.libraries]++;
  const double mp = median(peaks), mb = median(blocked);
  // The majority's libraries; on a tie, those of the lowest rank (rank 0 is the reference).
  int best = 0;
  for (const auto& [set, n] : sets) best = std::max(best, n);
  std::set<std::string> majority;
  for (const auto& k : ranks)
    if (sets[k.libraries] == best) {
      majority = k.libraries;
      break;
    }
  out.json = {{"ranks", nlohmann::json::array()}, {"divergences", nlohmann::json::array()}};
  out.text = fmt::format("ranks ({}):\n  {:>4}  {:<16} {:>8}  {:>14}  {:>12}\n", ranks.size(), "rank", "host", "pid",
                         "peak memory", "blocked");
  for (const auto& k : ranks) {
    out.text += fmt::format("  {:>4}  {:<16} {:>8}  {:>10.1f} MiB  {:>9.1f} ms\n", k.rank, k.host, k.pid, k.peak / 1048576.0,
                            k.blocked / 1e6);
    out.json["ranks"].push_back({{"rank", k.rank}, {"host", k.host}, {"pid", k.pid}, {"peak_bytes", k.peak}, {"blocked_ns", k.blocked}});
    auto add = [&](const std::string& kind, const std::string& what) {
      out.text += fmt::format("  ! rank {} ({}): {}\n", k.rank, kind, what);
      out.json["divergences"].push_back({{"rank", k.rank}, {"kind", kind}, {"what", what}});
    };
    if (mp > 0 && k.peak > 1.5 * mp) add("peak-memory", fmt::format("{:.1f} MiB, {:.1f}x the median", k.peak / 1048576.0, k.peak / mp));
    if (mb > 0 && k.blocked > 1.5 * mb && k.blocked > 1000000)
      add("stall-time", fmt::format("{:.1f} ms blocked, {:.1f}x the median", k.blocked / 1e6, k.blocked / mb));
    if (k.libraries != majority) {
      std::string extra, missing;
      for (const auto& l : k.libraries)
        if (!majority.count(l)) extra += (extra.empty() ? "" : ", ") + l;
      for (const auto& l : majority)
        if (!k.libraries.count(l)) missing += (missing.empty() ? "" : ", ") + l;
      add("libraries", fmt::format("loaded {}{}{}", extra.empty() ? "nothing else" : extra,
                                   missing.empty() ? "" : "; not ", missing));
    }
  }
  return out;
}

}  // namespace cudashim::tools
