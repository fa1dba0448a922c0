// leaks.cpp: live allocations grouped by call site and kind, read from the ledger at
// report time.
#include "policy/rules/leaks.h"

#include <algorithm>
#include <map>
#include <utility>

#include "recorder/ledger.h"

namespace cudashim::policy {
namespace {

struct Group {
  uint64_t count = 0, bytes = 0, oldest = ~0ull;
};
using Key = std::pair<const void*, int>;  // (site, kind)

void visit(const recorder::LiveAllocation& a, void* ctx) {
  if (a.cached) return;  // held by the pool, freed by the program: not a leak
  auto& groups = *static_cast<std::map<Key, Group>*>(ctx);
  Group& g = groups[{a.site, static_cast<int>(a.kind)}];
  ++g.count;
  g.bytes += a.bytes;
  g.oldest = std::min(g.oldest, a.born_ticks);
}

}  // namespace

Leaks live_leaks() {
  std::map<Key, Group> groups;
  recorder::ledger_for_each_live(visit, &groups);
  std::vector<std::pair<Key, Group>> v(groups.begin(), groups.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
  Leaks out;
  for (const auto& [k, g] : v) {
    out.live_allocations += g.count, out.live_bytes += g.bytes;
    out.by_site.push_back({static_cast<const recorder::CallSite*>(k.first), static_cast<MemKind>(k.second), g.count,
                           g.bytes, g.oldest});
  }
  return out;
}

}  // namespace cudashim::policy
