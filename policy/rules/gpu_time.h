// policy/rules/gpu_time.h: GPU busy and idle shares from NVML's utilization samples, the GPU's
// health over the same window, and the two findings drawn from them: gpu.idle (with its
// diagnosis, decided here once from a split of the idle time that adds up: sync-bound,
// launch-bound, input-bound, host-bound, unexplained) and gpu.clocks-throttled
// (catalog/findings.def; how each number is measured and its error: docs/gpu-time.md). The
// report, the exit summary, the page and the CLI render what this decides.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "catalog/findings.h"
#include "policy/gpu_busy_union.h"
#include "policy/settings_load.h"
#include "recorder/gpu_samples.h"
#include "recorder/thread_slots.h"

namespace cudashim::policy {

struct GpuTimeThresholds {
  uint64_t idle_warn_pct = 30;      // gpu.idle_warn_pct
  uint64_t throttle_warn_pct = 10;  // gpu.throttle_warn_pct
  // Fewer steady samples than this decide nothing (about 2 s at NVML's 1/6 s period; 3
  // health samples at one a second).
  uint64_t min_util_samples = 12, min_health_samples = 3;
  // Below this GPU time per launch, kernels are shorter than what a launch costs the host
  // (4-10 us through cudaLaunchKernel on recent drivers): the GPU waits for launches.
  uint64_t launch_cost_ns = 5000;
  // The precise mode decides with at least this many kernels over at least this long a
  // steady window; launch-bound once this share of its kernels is shorter than launch_cost_ns.
  uint64_t min_precise_kernels = 10, min_precise_window_ns = 500000000;
  double launch_bound_short_share = 0.5;
  // The host's time between submissions, per launch, below which that time is the launching
  // itself (a framework's per-op dispatch: tens of us a kernel) rather than work elsewhere
  // (batch preparation, Python between steps): launch-bound below, input-bound above.
  uint64_t launch_gap_ns = 200000;
};

// Reads the thresholds from the settings (start-up).
void configure_gpu_time(const Settings& s);
const GpuTimeThresholds& gpu_time_thresholds();

// A share of busy time over a window of samples. samples == 0: nothing was sampled there.
struct BusyShare {
  uint64_t from_ns = 0, to_ns = 0;  // monotonic
  uint64_t samples = 0;
  double busy = 0;  // 0..1: the mean of the samples' utilization
};

// What the host did (report time): the inputs of the diagnosis.
struct HostActivity {
  uint64_t wall_ns = 0;     // since start-up
  uint64_t blocked_ns = 0;  // inside blocking CUDA calls (outermost), every thread
  uint64_t launches = 0;    // kernel launches, every thread
  // The findings whose calls drain the GPU's queue (a sync, a synchronous copy, a free),
  // with their blocked time, the costliest first: "id at site (blocked ms)".
  std::vector<std::string> draining;
  // The host's steady-state loop (policy::steady_loop_span, monotonic ns); both 0 when no call
  // site is in one. When set, it is every device's steady window.
  uint64_t loop_from_ns = 0, loop_to_ns = 0;
  // The GPU idle measured after the draining findings' calls (Finding::gpu_idle_after_ns of
  // those in the loop, shim/drain_idle.h): the part of the idle that follows syncs.
  uint64_t idle_after_syncs_ns = 0;
  uint64_t steps = 0;      // the loop's steps: the most of any finding in it (0: unknown)
  uint64_t launch_ns = 0;  // the host's time inside kernel launch calls, every thread
};

// The inputs of the diagnosis from the runtime findings (evaluated once: policy::evaluate_findings)
// and the counters: `blocked_ns` and `launches` over every thread, `launch_ns` inside launch calls.
HostActivity host_activity(const std::vector<Finding>& findings, uint64_t wall_ns, uint64_t blocked_ns,
                           uint64_t launches, uint64_t launch_ns);

// The steady state's idle share split into parts that add up (idle == after_syncs +
// host_between + unexplained, each a share of the steady window, 0..1): the GPU idle measured
// after the loop's syncs; the host's own time between submissions with no sync (bounded by the
// share of the run the host spent outside blocking calls); the rest.
struct IdleSplit {
  double idle = 0, after_syncs = 0, host_between = 0, unexplained = 0;
  uint64_t window_ns = 0;      // the steady window the shares are of
  uint64_t steps = 0;          // HostActivity::steps
  double launches_per_step = 0;  // every launch over the loop's steps (0: steps unknown)
  double host_ns_per_launch = 0;  // the host's time between submissions per launch in the window
  double step_ns = 0;          // the window over the steps (0: steps unknown)
};

// One device over the run.
struct GpuDeviceTime {
  int device = -1;  // CUDA ordinal
  BusyShare run, steady;                  // device-wide (nvmlDeviceGetSamples)
  BusyShare process_run, process_steady;  // this process's kernels (nvmlDeviceGetProcessUtilization)
  uint64_t sample_period_ns = 0;          // the median gap between device-wide samples
  // Health in the steady window (every health sample when there is no steady window).
  uint64_t health_samples = 0, throttled_samples = 0;
  uint64_t slowdown_reasons = 0;  // every power/thermal/hardware reason bit seen
  uint32_t sm_mhz_min = 0, sm_mhz_max = 0, temp_c_max = 0, power_mw_max = 0, power_limit_mw = 0;
  uint64_t mem_used_max = 0;
  // "gpu-bound" (idle below the threshold); else the largest part of the split: "sync-bound"
  // (after syncs), "launch-bound" or "input-bound" (the host between submissions, by the
  // host's time per launch; "host-bound" with no launch counted), "unexplained"; or "unknown"
  // (too few samples).
  const char* diagnosis = "unknown";
  IdleSplit split;      // set with every diagnosis but "unknown"
  std::string summary;  // one line: "idle 63%: 61 points host between launches (launch-bound, 480 kernels a step), 2 points after syncs"
  // NVML's idle share is only a lower bound here: a launch-bound loop of kernels shorter than
  // NVML resolves (a period reads busy while any kernel runs in it; docs/gpu-time.md).
  bool idle_lower_bound = false;
  std::vector<std::string> evidence;  // one line each: the numbers behind the diagnosis
  // gpu.idle, gpu.clocks-throttled when they fired: subject "device N", message the summary
  // (gpu.idle) or the clocks' line, evidence the lines that bear on it.
  std::vector<Finding> findings;
  // The precise mode's figures for this device (CUPTI), when it collected any: the diagnosis
  // then uses them instead of NVML's.
  bool has_precise = false;
  PreciseDeviceTime precise;
};

// The devices' GPU time between start_ns and end_ns (monotonic), from the sampler's records.
// The steady window of a device is the host's steady-state loop (host.loop_from_ns to
// loop_to_ns) when there is one; else it starts after the first fifth of the span between its
// first and last busy sample and ends at the last one (docs/gpu-time.md). With neither, it has
// none (steady.samples == 0).
std::vector<GpuDeviceTime> gpu_time(const std::vector<recorder::GpuUtilSample>& util,
                                    const std::vector<recorder::GpuHealthSample>& health, const HostActivity& host,
                                    uint64_t start_ns, uint64_t end_ns,
                                    const std::vector<PreciseDeviceTime>& precise = {});

// A text bar of `width` characters whose full width is the steady window (the step): '#' the
// GPU busy, 's' idle after syncs, 'h' idle with the host between submissions, '?' unexplained.
// Each part gets its rounded share of the width, at least one character from half a point
// (the exit summary and `cudashim report` draw it; the page draws the same shares).
std::string idle_split_bar(const IdleSplit& s, size_t width = 40);

// Everything above for the report and the exit summary, decided once: the host's activity from
// `findings` and `totals`, the precise mode's devices, and each device's time over the run
// [start_mono_ns, start_mono_ns + wall_ns].
struct GpuTimeResult {
  HostActivity host;
  std::vector<PreciseDeviceTime> precise;
  std::vector<GpuDeviceTime> devices;
};
GpuTimeResult evaluate_gpu_time(const std::vector<Finding>& findings, const recorder::CounterTotals& totals,
                                uint64_t start_mono_ns, uint64_t wall_ns);

// The names of the clock-event reason bits set in `reasons`, "+"-joined ("sw_power_cap+hw_thermal").
std::string clock_event_names(uint64_t reasons);

}  // namespace cudashim::policy
