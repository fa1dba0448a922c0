// leaks.cpp: the allocator's report sections: live allocations grouped by call site
// ("leaks"), the caching pool ("pool") and the context of the first out-of-memory
// ("oom_context"). All three read the ledger at report time.
#include "policy/leaks.h"

#include <fmt/format.h>

#include "recorder/json_text.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "policy/admission.h"
#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/clock.h"
#include "recorder/ledger.h"
#include "recorder/oom.h"

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
  return out + pool_report_json() + oom_context_json();
}

std::string pool_report_json() {
  recorder::PoolStats st[kMaxDevices];
  const int n = recorder::pool_stats(st, kMaxDevices);
  std::string out = fmt::format("  \"pool\": {{\"enabled\": {}, \"max_cached_bytes\": {}, \"max_block_bytes\": {}, \"devices\": [",
                                pool_enabled() ? "true" : "false", pool_enabled() ? pool_max_cached(0) : 0,
                                pool_enabled() ? pool_max_block(0) : 0);
  for (int i = 0; i < n; ++i) {
    const recorder::PoolStats& p = st[i];
    out += fmt::format(
        "{}{{\"device\": {}, \"cached_bytes\": {}, \"peak_cached_bytes\": {}, \"hits\": {}, \"misses\": {}, "
        "\"not_ready\": {}, \"bypassed\": {}, \"released\": {}, \"trims\": {}, \"fences\": {}}}",
        i ? ", " : "", p.device, p.cached_bytes, p.peak_cached_bytes, p.hits, p.misses, p.not_ready, p.bypassed,
        p.released, p.trims, p.fences);
  }
  out += "]},\n";
  return out;
}

std::string oom_context_json() {
  const recorder::OomSnapshot s = recorder::oom_first();
  if (!s.taken) return "  \"oom_context\": null,\n";
  const recorder::OomEvent& e = s.event;
  std::string out = fmt::format(
      "  \"oom_context\": {{\"api\": {}, \"device\": {}, \"requested_bytes\": {}, \"denied_by_policy\": {}, "
      "\"reason\": {}, \"devices\": [",
      json_str(hook_info(e.api).name), e.device, e.requested, e.denied_by_policy ? "true" : "false",
      json_str(e.reason ? e.reason : ""));
  for (int i = 0; i < s.devices; ++i) {
    const recorder::OomDevice& d = s.device[i];
    out += fmt::format(
        "{}{{\"device\": {}, \"live_bytes\": {}, \"peak_bytes\": {}, \"in_use_bytes\": {}, \"cached_bytes\": {}, "
        "\"cap_bytes\": {}, \"largest_block_bytes\": {}, \"largest_block_basis\": \"{}\"}}",
        i ? ", " : "", d.device, d.live_bytes, d.peak_bytes, d.capped_bytes, d.cached_bytes, d.cap, d.largest_block,
        d.basis ? d.basis : "unknown");
  }
  out += "], \"top_sites\": [";
  for (int i = 0; i < s.sites; ++i) {
    const auto* site = static_cast<const recorder::CallSite*>(s.site[i].site);
    out += fmt::format("{}{{\"where\": {}, \"api\": {}, \"bytes\": {}, \"count\": {}}}", i ? ", " : "",
                       site ? json_str(describe_site(*site)) : "null", site ? json_str(hook_info(site->api).name) : "null",
                       s.site[i].bytes, s.site[i].count);
  }
  out += "]},\n";
  return out;
}

}  // namespace cudashim::policy
