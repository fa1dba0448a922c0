// leaks.cpp: grouping the ledger's live allocations by call site.
#include "policy/leaks.h"

#include <fmt/format.h>

#include "recorder/json_text.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/clock.h"
#include "recorder/ledger.h"

namespace cudashim::policy {
namespace {

struct Group {
  uint64_t count = 0, bytes = 0, oldest = ~0ull;
};
using Key = std::pair<const void*, int>;  // (site, kind)

void visit(const recorder::LiveAllocation& a, void* ctx) {
  auto& groups = *static_cast<std::map<Key, Group>*>(ctx);
  Group& g = groups[{a.site, static_cast<int>(a.kind)}];
  ++g.count;
  g.bytes += a.bytes;
  g.oldest = std::min(g.oldest, a.born_ticks);
}


}  // namespace

std::string leaks_report_json() {
  std::map<Key, Group> groups;
  recorder::ledger_for_each_live(visit, &groups);
  std::vector<std::pair<Key, Group>> v(groups.begin(), groups.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
  uint64_t total_count = 0, total_bytes = 0;
  for (const auto& [k, g] : v) total_count += g.count, total_bytes += g.bytes;
  const uint64_t now = now_ticks();
  std::string out = fmt::format("  \"leaks\": {{\"live_allocations\": {}, \"live_bytes\": {}, \"by_site\": [", total_count,
                                total_bytes);
  for (size_t i = 0; i < v.size() && i < 20; ++i) {
    const auto& [k, g] = v[i];
    const auto* site = static_cast<const recorder::CallSite*>(k.first);
    out += fmt::format("{}{{\"where\": {}, \"api\": {}, \"kind\": \"{}\", \"count\": {}, \"bytes\": {}, \"oldest_age_ns\": {}}}",
                       i ? ", " : "", site ? json_str(describe_site(*site)) : "null",
                       site ? json_str(hook_info(site->api).name) : "null", mem_kind_name(static_cast<MemKind>(k.second)),
                       g.count, g.bytes, ticks_to_ns(now > g.oldest ? now - g.oldest : 0));
  }
  out += "]},\n";
  return out;
}

}  // namespace cudashim::policy
