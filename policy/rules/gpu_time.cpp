// policy/rules/gpu_time.cpp: see gpu_time.h.
#include "policy/rules/gpu_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "symbols/nvml_api.h"

namespace cudashim::policy {
namespace {

GpuTimeThresholds g_thresholds;

BusyShare share(const std::vector<recorder::GpuUtilSample>& util, int device, bool process, uint64_t from,
                uint64_t to) {
  BusyShare b{from, to, 0, 0};
  uint64_t sum = 0;
  for (const auto& u : util)
    if (u.device == device && u.process == process && u.t_ns >= from && u.t_ns <= to) ++b.samples, sum += u.pct;
  if (b.samples) b.busy = static_cast<double>(sum) / (100.0 * static_cast<double>(b.samples));
  return b;
}

double pct(double share) { return 100.0 * share; }

// The split of the idle share `idle` over a steady window of `window_ns` (IdleSplit).
IdleSplit split_idle(double idle, uint64_t window_ns, const HostActivity& host) {
  IdleSplit s;
  s.idle = std::clamp(idle, 0.0, 1.0);
  s.window_ns = window_ns;
  s.steps = host.steps;
  const double w = static_cast<double>(window_ns);
  s.after_syncs = w > 0 ? std::min(s.idle, static_cast<double>(host.idle_after_syncs_ns) / w) : 0;
  // The host's time outside blocking calls bounds what it can have spent between submissions;
  // the idle after syncs is part of that time too.
  const double host_free =
      host.wall_ns ? 1.0 - static_cast<double>(std::min(host.blocked_ns, host.wall_ns)) / static_cast<double>(host.wall_ns) : 0;
  s.host_between = std::clamp(host_free - s.after_syncs, 0.0, s.idle - s.after_syncs);
  s.unexplained = std::max(0.0, s.idle - s.after_syncs - s.host_between);
  if (host.launches) s.host_ns_per_launch = s.host_between * w / static_cast<double>(host.launches);
  if (host.steps) {
    s.launches_per_step = static_cast<double>(host.launches) / static_cast<double>(host.steps);
    s.step_ns = w / static_cast<double>(host.steps);
  }
  return s;
}

// The host part's name: launch-bound when the kernels are shorter than a launch costs or the
// host's time between submissions is a launch's worth per kernel; input-bound otherwise.
const char* host_part(GpuDeviceTime& d, const HostActivity& host, const GpuTimeThresholds& t, double per_launch) {
  if (!host.launches) return "host-bound";
  if (d.has_precise && d.precise.short_share() >= t.launch_bound_short_share) {
    d.evidence.push_back(fmt::format("{:.0f}% of {} kernels ran shorter than a launch costs the host (~{} us): kernels end before the next is launched",
                                     pct(d.precise.short_share()), d.precise.kernels, t.launch_cost_ns / 1000));
    return "launch-bound";
  }
  if (!d.has_precise && per_launch < static_cast<double>(t.launch_cost_ns)) {
    d.evidence.push_back(fmt::format("{} launches; {:.1f} us of GPU time per launch, less than a launch costs the host (~{} us)",
                                     host.launches, per_launch / 1e3, t.launch_cost_ns / 1000));
    // Measured on the H200 (2026-12-02): 270,000 kernels under 5 us in 3 s read 31 % busy to
    // NVML and 5-8 % to CUPTI's timestamps. NVML's figure is the floor of the idle share.
    d.idle_lower_bound = true;
    d.evidence.push_back(fmt::format("kernels this short are below what NVML resolves (it reads a period busy while any kernel "
                                     "runs in it): the GPU was idle at least {:.0f}% of the steady state; the precise mode "
                                     "(CUDASHIM_GPU_PRECISE=1) measures it",
                                     pct(d.split.idle)));
    return "launch-bound";
  }
  const bool launching = d.split.host_ns_per_launch < static_cast<double>(t.launch_gap_ns);
  d.evidence.push_back(fmt::format("the host spent {:.0f} us between submissions per launch ({} launches{}): {}",
                                   d.split.host_ns_per_launch / 1e3, host.launches,
                                   d.split.launches_per_step > 0 ? fmt::format(", {:.0f} a step", d.split.launches_per_step) : "",
                                   launching ? fmt::format("under {} us, the launching itself (a framework's per-op dispatch)", t.launch_gap_ns / 1000)
                                             : fmt::format("over {} us, work elsewhere (data, Python between steps)", t.launch_gap_ns / 1000)));
  return launching ? "launch-bound" : "input-bound";
}

// The one-line summary of a split whose host part is named `host_name`, the largest part first.
std::string split_summary(const IdleSplit& s, const char* host_name) {
  struct Part {
    double share;
    std::string text;
  };
  std::string host = fmt::format("host between launches ({}", host_name);
  if (s.launches_per_step > 0) host += fmt::format(", {:.0f} kernels a step", s.launches_per_step);
  host += ")";
  std::vector<Part> parts{{s.after_syncs, "after syncs"}, {s.host_between, host}, {s.unexplained, "unexplained"}};
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.share > b.share; });
  std::string out = fmt::format("idle {:.0f}%", pct(s.idle));
  std::string sep = ": ";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0 && pct(parts[i].share) < 0.5) continue;
    const double points = std::round(pct(parts[i].share));
    out += fmt::format("{}{:.0f} point{} {}", sep, points, points == 1 ? "" : "s", parts[i].text);
    sep = ", ";
  }
  if (s.step_ns > 0) out += fmt::format("; a step {:.1f} ms", s.step_ns / 1e6);
  return out;
}

// The diagnosis: the largest part of the split (ties: syncs, then the host, then unexplained).
void decide(GpuDeviceTime& d, const HostActivity& host, const GpuTimeThresholds& t, double per_launch) {
  const IdleSplit& s = d.split;
  const char* host_name = host_part(d, host, t, per_launch);
  if (s.after_syncs >= s.host_between && s.after_syncs >= s.unexplained && s.after_syncs > 0) {
    d.diagnosis = "sync-bound";
    d.evidence.push_back("the largest part of the idle follows calls that drain the GPU's queue: the host waits, then prepares and submits the next work while the GPU has none");
    for (const auto& x : host.draining) d.evidence.push_back(x);
  } else if (s.host_between >= s.unexplained) {
    d.diagnosis = host_name;
  } else {
    d.diagnosis = "unexplained";
    d.evidence.push_back("most of the idle is neither after a sync nor host time between submissions: the host was blocked in calls that do not drain the queue, or another thread or process held the GPU's work");
  }
  if (std::string_view(d.diagnosis) != "launch-bound") d.idle_lower_bound = false;
  d.summary = split_summary(s, host_name);
  d.evidence.push_back(fmt::format("of the steady state's {:.1f}% idle: {:.1f} points after syncs (the GPU idle measured from each drain to the next submitted work), "
                                   "{:.1f} points the host between submissions with no sync, {:.1f} points unexplained",
                                   pct(s.idle), pct(s.after_syncs), pct(s.host_between), pct(s.unexplained)));
}

// The fix for the part that the diagnosis names (the row's fix lists every case).
std::string idle_fix(std::string_view diagnosis) {
  if (diagnosis == "sync-bound")
    return "move or remove the syncs the findings name (their GPU idle after is what removing them can recover)";
  if (diagnosis == "launch-bound")
    return "fewer, larger kernels: fuse them or capture the step in a CUDA graph (torch.compile mode=reduce-overhead); "
           "removing syncs recovers only their points";
  if (diagnosis == "input-bound" || diagnosis == "host-bound")
    return "prepare batches off the main thread (DataLoader workers, pin_memory, prefetch) so the host submits the next "
           "step while the GPU runs this one";
  return "open the trace (.trace) at a step to see what the host did while the GPU waited (another thread's or "
         "process's work is not counted)";
}

// Fills the diagnosis of a device whose steady window is known.
void diagnose(GpuDeviceTime& d, const HostActivity& host, const GpuTimeThresholds& t) {
  double busy = d.steady.busy;
  uint64_t window = d.steady.to_ns - d.steady.from_ns;
  if (d.steady.samples) {
    d.evidence.push_back(fmt::format("device {}: busy {:.0f}% of the steady state ({} samples over {:.1f} s), idle {:.0f}%",
                                     d.device, pct(d.steady.busy), d.steady.samples,
                                     static_cast<double>(d.steady.to_ns - d.steady.from_ns) / 1e9, pct(1.0 - d.steady.busy)));
    if (d.process_steady.samples)
      d.evidence.push_back(fmt::format("this process's kernels: busy {:.0f}% of the steady state", pct(d.process_steady.busy)));
  }
  if (d.has_precise) {
    const PreciseDeviceTime& p = d.precise;
    busy = p.steady.busy();
    window = p.steady.to_ns - p.steady.from_ns;
    d.evidence.push_back(fmt::format("device {} by CUPTI's timestamps: busy {:.1f}% of the steady state ({:.1f} s), idle {:.1f}%; "
                                     "{} kernels, {:.0f}% shorter than {} us",
                                     d.device, pct(busy), static_cast<double>(p.steady.to_ns - p.steady.from_ns) / 1e9,
                                     pct(1.0 - busy), p.kernels, pct(p.short_share()), t.launch_cost_ns / 1000));
    if (p.kernels < t.min_precise_kernels || p.steady.to_ns - p.steady.from_ns < t.min_precise_window_ns) {
      d.diagnosis = "unknown";
      d.evidence.push_back(fmt::format("fewer than {} kernels or a steady state shorter than {:.1f} s: no diagnosis",
                                       t.min_precise_kernels, static_cast<double>(t.min_precise_window_ns) / 1e9));
      return;
    }
  } else if (d.steady.samples < t.min_util_samples) {
    d.diagnosis = "unknown";
    d.evidence.push_back(fmt::format("fewer than {} utilization samples in the steady state: no diagnosis", t.min_util_samples));
    return;
  }
  d.split = split_idle(1.0 - busy, window, host);
  if (pct(d.split.idle) < static_cast<double>(t.idle_warn_pct)) {
    d.diagnosis = "gpu-bound";
    d.summary = fmt::format("idle {:.0f}%: gpu-bound", pct(d.split.idle));
    return;
  }
  // GPU time per launch over the run: an upper bound on the mean kernel's length, since the
  // samples count a period busy while any kernel runs.
  const double busy_ns = d.run.busy * static_cast<double>(d.run.to_ns - d.run.from_ns);
  const double per_launch = host.launches ? busy_ns / static_cast<double>(host.launches) : 0;
  decide(d, host, t, per_launch);
  Finding f{FindingId::gpu_idle, fmt::format("device {}", d.device), d.summary, d.evidence};
  f.exact_fix = idle_fix(d.diagnosis);
  d.findings.push_back(std::move(f));
}

}  // namespace

void configure_gpu_time(const Settings& s) {
  g_thresholds.idle_warn_pct = s.gpu_idle_warn_pct;
  g_thresholds.throttle_warn_pct = s.gpu_throttle_warn_pct;
}
const GpuTimeThresholds& gpu_time_thresholds() { return g_thresholds; }

std::string clock_event_names(uint64_t r) {
  static const struct {
    uint64_t bit;
    const char* name;
  } kNames[] = {{symbols::kClockEventGpuIdle, "gpu_idle"},         {symbols::kClockEventAppClocks, "applications_clocks"},
                {symbols::kClockEventSwPowerCap, "sw_power_cap"},   {symbols::kClockEventHwSlowdown, "hw_slowdown"},
                {symbols::kClockEventSyncBoost, "sync_boost"},      {symbols::kClockEventSwThermal, "sw_thermal"},
                {symbols::kClockEventHwThermal, "hw_thermal"},      {symbols::kClockEventHwPowerBrake, "hw_power_brake"},
                {symbols::kClockEventDisplay, "display_clocks"}};
  std::string out;
  for (const auto& n : kNames)
    if (r & n.bit) out += (out.empty() ? "" : "+") + std::string(n.name);
  return out;
}

std::vector<GpuDeviceTime> gpu_time(const std::vector<recorder::GpuUtilSample>& util,
                                    const std::vector<recorder::GpuHealthSample>& health, const HostActivity& host,
                                    uint64_t start_ns, uint64_t end_ns,
                                    const std::vector<PreciseDeviceTime>& precise) {
  const GpuTimeThresholds& t = g_thresholds;
  std::vector<int> devices;
  for (const auto& u : util)
    if (std::find(devices.begin(), devices.end(), u.device) == devices.end()) devices.push_back(u.device);
  for (const auto& h : health)
    if (std::find(devices.begin(), devices.end(), h.device) == devices.end()) devices.push_back(h.device);
  for (const auto& p : precise)
    if (std::find(devices.begin(), devices.end(), p.device) == devices.end()) devices.push_back(p.device);
  std::sort(devices.begin(), devices.end());
  std::vector<GpuDeviceTime> out;
  for (int dev : devices) {
    GpuDeviceTime d;
    d.device = dev;
    d.run = share(util, dev, false, start_ns, end_ns);
    d.process_run = share(util, dev, true, start_ns, end_ns);
    uint64_t first_busy = 0, last_busy = 0, prev = 0;
    std::vector<uint64_t> gaps;
    for (const auto& u : util) {
      if (u.device != dev || u.process || u.t_ns < start_ns || u.t_ns > end_ns) continue;
      if (prev) gaps.push_back(u.t_ns - prev);
      prev = u.t_ns;
      if (u.pct > 0) last_busy = u.t_ns, first_busy = first_busy ? first_busy : u.t_ns;
    }
    if (!gaps.empty()) {
      std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
      d.sample_period_ns = gaps[gaps.size() / 2];
    }
    uint64_t from = start_ns, to = end_ns;
    if (host.loop_to_ns > host.loop_from_ns || first_busy) {
      // The host's loop when it has one: a process's set-up can use a device seconds before it
      // (the H200's input-bound loop: a 3 s loop in a 6.7 s window read 94 % idle where the
      // profiler read 87 %).
      const SteadyWindow w = steady_window(first_busy, last_busy, host.loop_from_ns, host.loop_to_ns, start_ns, end_ns);
      from = w.from, to = w.to;
      d.steady = share(util, dev, false, from, to);
      d.process_steady = share(util, dev, true, from, to);
    }
    for (const auto& h : health) {
      if (h.device != dev || h.t_ns < from || h.t_ns > to) continue;
      ++d.health_samples;
      if (h.have & recorder::GpuHealthSample::kReasons) {
        const uint64_t slow = h.clock_event_reasons & symbols::kClockEventsSlowdown;
        d.slowdown_reasons |= slow;
        if (slow) ++d.throttled_samples;
      }
      if (h.have & recorder::GpuHealthSample::kClocks) {
        d.sm_mhz_min = d.sm_mhz_min ? std::min(d.sm_mhz_min, h.sm_mhz) : h.sm_mhz;
        d.sm_mhz_max = std::max(d.sm_mhz_max, h.sm_mhz);
      }
      if (h.have & recorder::GpuHealthSample::kTemp) d.temp_c_max = std::max(d.temp_c_max, h.temp_c);
      if (h.have & recorder::GpuHealthSample::kPower)
        d.power_mw_max = std::max(d.power_mw_max, h.power_mw), d.power_limit_mw = h.power_limit_mw;
      if (h.have & recorder::GpuHealthSample::kMemory) d.mem_used_max = std::max(d.mem_used_max, h.mem_used_bytes);
    }
    for (const auto& p : precise)
      if (p.device == dev && p.kernels + p.copies + p.memsets > 0) d.has_precise = true, d.precise = p;
    if (d.steady.samples || d.has_precise) diagnose(d, host, t);
    if (d.health_samples >= t.min_health_samples &&
        100 * d.throttled_samples >= t.throttle_warn_pct * d.health_samples && d.throttled_samples > 0) {
      const std::string line = fmt::format("device {}: clocks held down ({}) in {} of {} steady-state health samples; SM clock {}-{} MHz",
                                           dev, clock_event_names(d.slowdown_reasons), d.throttled_samples, d.health_samples,
                                           d.sm_mhz_min, d.sm_mhz_max);
      d.evidence.push_back(line);
      d.findings.push_back(Finding{FindingId::gpu_clocks_throttled, fmt::format("device {}", dev), line, {line}});
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::string idle_split_bar(const IdleSplit& s, size_t width) {
  // The busy part first, rounded; the idle parts share the rest, at least a cell each from half a
  // point (what the summary line names), the largest giving up or taking the rounding's difference.
  const size_t busy = std::min(width, static_cast<size_t>(std::lround(std::clamp(1.0 - s.idle, 0.0, 1.0) * width)));
  const double parts[] = {s.after_syncs, s.host_between, s.unexplained};
  const char marks[] = {'s', 'h', '?'};
  size_t cells[3], idle_cells = 0;
  for (size_t i = 0; i < 3; ++i) {
    const double want = std::max(0.0, parts[i]) * static_cast<double>(width);
    cells[i] = parts[i] >= 0.005 ? std::max<size_t>(1, static_cast<size_t>(std::lround(want))) : 0;
    idle_cells += cells[i];
  }
  size_t* big = std::max_element(cells, cells + 3);
  while (idle_cells > width - busy && *big > 0) --*big, --idle_cells;
  if (idle_cells > 0) *big += width - busy - idle_cells, idle_cells = width - busy;
  std::string bar(width - idle_cells, '#');
  for (size_t i = 0; i < 3; ++i) bar.append(cells[i], marks[i]);
  return bar;
}

}  // namespace cudashim::policy
