// policy/rules/gpu_time.cpp: see gpu_time.h.
#include "policy/rules/gpu_time.h"

#include <fmt/format.h>

#include <algorithm>

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

// Fills the diagnosis of a device whose steady window is known.
void diagnose(GpuDeviceTime& d, const HostActivity& host, const GpuTimeThresholds& t) {
  double busy = d.steady.busy;
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
  const double idle = 1.0 - busy;
  if (pct(idle) < static_cast<double>(t.idle_warn_pct)) {
    d.diagnosis = "gpu-bound";
    return;
  }
  d.findings.push_back(FindingId::gpu_idle);
  const double host_outside = host.wall_ns ? 1.0 - static_cast<double>(std::min(host.blocked_ns, host.wall_ns)) /
                                                       static_cast<double>(host.wall_ns)
                                           : 0;
  // GPU time per launch over the run: an upper bound on the mean kernel's length, since the
  // samples count a period busy while any kernel runs.
  const double busy_ns = d.run.busy * static_cast<double>(d.run.to_ns - d.run.from_ns);
  const double per_launch = host.launches ? busy_ns / static_cast<double>(host.launches) : 0;
  if (d.has_precise && d.precise.short_share() >= t.launch_bound_short_share) {
    d.diagnosis = "launch-bound";
    d.evidence.push_back(fmt::format("{:.0f}% of {} kernels ran shorter than a launch costs the host (~{} us): kernels end before the next is launched",
                                     pct(d.precise.short_share()), d.precise.kernels, t.launch_cost_ns / 1000));
  } else if (!d.has_precise && host.launches && per_launch < static_cast<double>(t.launch_cost_ns)) {
    d.diagnosis = "launch-bound";
    d.evidence.push_back(fmt::format("{} launches; {:.1f} us of GPU time per launch, less than a launch costs the host (~{} us)",
                                     host.launches, per_launch / 1e3, t.launch_cost_ns / 1000));
    // Measured on the H200 (2026-12-02): 270,000 kernels under 5 us in 3 s read 31 % busy to
    // NVML and 5-8 % to CUPTI's timestamps. NVML's figure is the floor of the idle share.
    d.idle_lower_bound = true;
    d.evidence.push_back(fmt::format("kernels this short are below what NVML resolves (it reads a period busy while any kernel "
                                     "runs in it): the GPU was idle at least {:.0f}% of the steady state; the precise mode "
                                     "(CUDASHIM_GPU_PRECISE=1) measures it",
                                     pct(idle)));
  } else if (!host.draining.empty()) {
    d.diagnosis = "sync-bound";
    d.evidence.push_back("the idle follows calls that drain the GPU's queue in the loop: the host waits, then submits the next work while the GPU has none");
    for (const auto& s : host.draining) d.evidence.push_back(s);
  } else {
    d.diagnosis = "host-bound";
    d.evidence.push_back(fmt::format("no sync finding in the loop; the host spent {:.0f}% of the run outside CUDA calls (Python, data preparation): the GPU waits for work",
                                     pct(host_outside)));
  }
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
      d.findings.push_back(FindingId::gpu_clocks_throttled);
      d.evidence.push_back(fmt::format("device {}: clocks held down ({}) in {} of {} steady-state health samples; SM clock {}-{} MHz",
                                       dev, clock_event_names(d.slowdown_reasons), d.throttled_samples, d.health_samples,
                                       d.sm_mhz_min, d.sm_mhz_max));
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace cudashim::policy
