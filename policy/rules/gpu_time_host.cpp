// policy/rules/gpu_time_host.cpp: the host's side of the GPU-time diagnosis (host_activity) and
// the one evaluation for the exit path and the report (evaluate_gpu_time), see gpu_time.h. Apart
// from gpu_time.cpp, which the CLI and the fuzzers also build, since these read the recorder's
// call sites and counters.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "policy/rules/gpu_time.h"
#include "policy/sync_rules.h"
#include "recorder/clock.h"
#include "recorder/gpu_intervals.h"

namespace cudashim::policy {

HostActivity host_activity(const std::vector<Finding>& findings, uint64_t wall_ns, uint64_t blocked_ns,
                           uint64_t launches, uint64_t launch_ns) {
  HostActivity h;
  h.wall_ns = wall_ns;
  h.blocked_ns = blocked_ns;
  h.launches = launches;
  h.launch_ns = launch_ns;
  for (const auto& f : findings) {
    h.steps = std::max(h.steps, f.steps);
    if (!drains_queue(finding_info(f.id).trait)) continue;
    if (f.steps) h.idle_after_syncs_ns += f.gpu_idle_after_ns;  // in the loop: its idle is the steady state's
    const std::string where = f.sites.empty() ? std::string("the process") : describe_site(*f.sites.front().site);
    h.draining.push_back(fmt::format("{} at {}: {} calls, blocked {:.1f} ms, GPU idle {:.1f} ms after", finding_info(f.id).name,
                                     where, f.count, static_cast<double>(f.blocked_ns) / 1e6,
                                     static_cast<double>(f.gpu_idle_after_ns) / 1e6));
  }
  // The host's steady-state loop, from the hook clock to the monotonic one (now as the anchor).
  const TickSpan loop = steady_loop_span();
  if (loop.last > loop.first) {
    const uint64_t now_t = now_ticks(), now_ns = monotonic_ns();
    auto mono = [&](uint64_t t) { return now_ns - std::min(now_ns, ticks_to_ns(now_t > t ? now_t - t : 0)); };
    h.loop_from_ns = mono(loop.first), h.loop_to_ns = mono(loop.last);
  }
  return h;
}

double steady_gpu_idle_share() {
  const HostActivity host = host_activity({}, 0, 0, 0, 0);  // only its steady loop window is read here
  if (host.loop_to_ns <= host.loop_from_ns) return -1;
  double idle = -1;
  for (const auto& d : gpu_time(recorder::gpu_util_samples(), {}, host, host.loop_from_ns, host.loop_to_ns)) {
    if (std::string_view(d.diagnosis) == "unknown" || d.steady.samples == 0) continue;
    const double share = 1.0 - std::min(1.0, std::max(0.0, d.steady.busy));
    idle = idle < 0 ? share : std::min(idle, share);
  }
  return idle;
}

GpuTimeResult evaluate_gpu_time(const std::vector<Finding>& findings, const recorder::CounterTotals& totals,
                                uint64_t start_mono_ns, uint64_t wall_ns) {
  uint64_t launches = 0, launch_ns = 0;
  for (size_t i = 0; i < kHookCount; ++i)
    if (hook_info(static_cast<HookId>(i)).family == Family::launch)  // the outer calls: the runtime's launch calls the driver's
      launches += totals.calls[i] - std::min(totals.nested_calls[i], totals.calls[i]),
          launch_ns += totals.time_ns[i] - std::min(totals.nested_ns[i], totals.time_ns[i]);
  GpuTimeResult r;
  r.host = host_activity(findings, wall_ns, ticks_to_ns(totals.blocked_outer_ns), launches, ticks_to_ns(launch_ns));
  const uint64_t end = start_mono_ns + wall_ns;
  r.precise = precise_time(recorder::precise_intervals(), start_mono_ns, end, gpu_time_thresholds().launch_cost_ns,
                           r.host.loop_from_ns, r.host.loop_to_ns);
  r.devices = gpu_time(recorder::gpu_util_samples(), recorder::gpu_health_samples(), r.host, start_mono_ns, end, r.precise);
  return r;
}

}  // namespace cudashim::policy
