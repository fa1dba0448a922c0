// summary.cpp: the exit summary of the findings.
#include "report/summary.h"

#include <fmt/format.h>

#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/own_cost.h"
#include "recorder/thread_slots.h"

#include <memory>

namespace cudashim::report {

std::string findings_summary_text(const std::vector<Finding>& findings, uint64_t wall_ns,
                                  bool* any_warning) {
  std::string out;
  for (const Finding& f : findings) {
    if (f.severity() == Severity::info && !f.framework.empty()) continue;  // a framework's own: nothing to do
    const FindingInfo& row = finding_info(f.id);
    if (any_warning != nullptr && f.severity() != Severity::info) *any_warning = true;
    // The costliest site with its own count (never the finding's total "at" one site), and
    // what it costs per steady-state step next to the share of wall.
    std::string where = "(process-wide)";
    if (!f.sites.empty()) {
      const recorder::CallSite& s = *f.sites[0].site;
      const std::string first = policy::describe_site(s);
      where = fmt::format("{} calls at {}", s.hits.load(std::memory_order_relaxed), first);
      // Sites on the first one's line are that line's (x.to(dev), y.to(dev)), as `cudashim report` prints them.
      size_t same_line = 0;
      for (size_t i = 1; i < f.sites.size(); ++i) same_line += policy::describe_site(*f.sites[i].site) == first ? 1 : 0;
      if (same_line) where += fmt::format(" (+{} more call site{} on this line)", same_line, same_line == 1 ? "" : "s");
      if (f.sites.size() > 1 + same_line) where += fmt::format(" (+{} more sites)", f.sites.size() - 1 - same_line);
      if (s.sampled) where += " (sampled: the main thread seen waiting here while another thread read back)";
    }
    std::string per_step =
        f.steps ? fmt::format("  {} steps, {:.1f} calls and {:.3f} ms blocked per step", f.steps,
                              static_cast<double>(f.count) / f.steps, f.blocked_ns / 1e6 / f.steps)
                : std::string();
    if (f.steps && f.gpu_idle_after_ns) per_step += fmt::format(", GPU idle {:.3f} ms after", f.gpu_idle_after_ns / 1e6 / f.steps);
    // Its price (docs/findings.md, "What a finding costs"): what the step would lose without it.
    if (f.steps)
      per_step += f.step_ns ? fmt::format("; save {:.3f} ms/step ({:.1f}% of the step)", f.saving_per_step_ns / 1e6,
                                          100.0 * f.step_share())
                            : fmt::format("; save {:.3f} ms/step", f.saving_per_step_ns / 1e6);
    for (FindingId also : f.also) where += fmt::format(" (also {})", finding_info(also).name);
    out += fmt::format("  {:<26} {:>8} calls  {:>10.1f} ms blocked ({:>5.1f}% of wall){}  {}\n", row.name, f.count,
                       f.blocked_ns / 1e6, wall_ns ? 100.0 * f.blocked_ns / wall_ns : 0.0, per_step, where);
  }
  return out;
}

std::string self_cost_text(uint64_t wall_ns) {
  const auto totals = std::make_unique<recorder::CounterTotals>();  // large: not on a small thread's stack
  recorder::sum_slots(*totals);
  const bool python = recorder::g_py_locate.load(std::memory_order_acquire) != nullptr;
  const recorder::OwnCost k = recorder::own_cost(*totals, wall_ns, python);
  return fmt::format("cudashim used {:.2f}% of the run ({:.1f} ms CPU in its threads + about {:.1f} ms in its hooks; "
                     "{:.2f}% of the process's CPU time; {:.2f}% once started)\n",
                     k.share_of_wall_pct(), k.threads_cpu_ns / 1e6, k.hooks_ns / 1e6, k.share_of_cpu_pct(),
                     k.steady.share_of_wall_pct);
}

}  // namespace cudashim::report
