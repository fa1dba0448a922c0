// report_model.h: what `cudashim report` reads from each file, as typed structs, and how
// each is read from its JSON (every field through tools/json_fields.h: a file with a field
// of the wrong type is one problem, never an exception). The summary, the rank comparison
// and the HTML page render these structs only, never the JSON, so a field they show cannot
// have gone unchecked. Only the fields something renders are here; --json copies the
// documents as they were read.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/findings.h"
#include "tools/json_fields.h"

namespace cudashim::tools {

// Findings (findings[], library_findings[], gpu_time.findings[]) are read into the one Finding of
// catalog/findings.h: its id (FindingId::none for an id this build has no row for, kept as
// written in recorded.id), the report's severity and fix, and what only a report has in
// Finding::recorded (RecordedFinding: the call sites as recorded, the per-step figures as written).

struct ApiRow {
  std::string name;
  uint64_t calls = 0, errors = 0, last_error = 0;
  uint64_t blocked_ns = 0;  // 0 when not recorded
};

struct DeviceMemory {
  int64_t device = 0;
  uint64_t live_bytes = 0, peak_bytes = 0;
};

struct TorchDevice {
  int64_t device = 0;
  uint64_t allocated_bytes = 0, allocated_peak_bytes = 0, reserved_bytes = 0, reserved_peak_bytes = 0;
  uint64_t process_bytes = 0, alloc_retries = 0;
  int64_t outside_torch_bytes = 0;
  double fragmentation = 0;
  bool fragmented = false;
};

struct TorchSnapshot {
  std::string moment;
  std::vector<TorchDevice> devices;
};

// libraries[]: what was loaded, and how and why that file.
struct LoadedLibrary {
  std::string family, file, path, version, linkage, how, loaded_by, requested, reason;
};

// A call site holding memory: leaks.by_site[], oom_context.top_sites[].
struct MemorySite {
  std::optional<std::string> where, api;
  std::string kind;
  uint64_t count = 0, bytes = 0, oldest_age_ns = 0;
};

struct OomDevice {
  int64_t device = 0;
  uint64_t live_bytes = 0, in_use_bytes = 0, cached_bytes = 0, cap_bytes = 0, largest_block_bytes = 0;
  std::string largest_block_basis;
};

// oom and oom_context: how many, and the first one as it was.
struct OomEvents {
  uint64_t count = 0, denied_by_policy = 0;
  bool has_context = false;
  std::string api, reason;
  int64_t device = 0;
  uint64_t requested_bytes = 0;
  bool context_denied_by_policy = false;
  std::vector<OomDevice> devices;
  std::vector<MemorySite> top_sites;
};

struct AppliedSetting {
  std::string name, value;
  bool forced = false;
};

// policy.refused[]: a value a file or the environment gave that was not taken.
struct RefusedSetting {
  std::string setting, value, from, why, kept;
};

// policy: the allocator policy in force.
struct PolicyInForce {
  bool present = false;
  std::optional<std::string> mem_cap;
  uint64_t cap_bytes_device0 = 0;
  std::string managed;
  bool locked = false;
  std::vector<std::pair<std::string, std::string>> sources;  // setting, where it came from
  std::vector<AppliedSetting> applied_env;
  std::vector<RefusedSetting> refused;  // none in reports before policy.refused
};

struct PoolDevice {
  int64_t device = 0;
  uint64_t cached_bytes = 0, peak_cached_bytes = 0, hits = 0, misses = 0, bypassed = 0, trims = 0;
};

struct PoolStats {
  bool enabled = false;
  uint64_t max_cached_bytes = 0;
  std::vector<PoolDevice> devices;
};

// The report's gpu_time section (docs/gpu-time.md): NVML's busy share of each device and the
// findings of the GPU's side.
struct GpuTimeDevice {
  int64_t device = 0;
  std::optional<double> steady_idle, process_steady_idle;  // 0 to 1; none without samples
  int64_t steady_samples = 0;
  std::string diagnosis;
  bool idle_lower_bound = false;              // steady_idle is NVML's floor (kernels too short for it)
  std::optional<double> precise_steady_idle;  // the precise mode's (CUPTI), when it collected
  // The split of the idle share that the diagnosis was decided from (gpu_time.devices[].idle_split,
  // policy/rules/gpu_time.h), as written; none in a report from before it.
  struct Split {
    double idle = 0, after_syncs = 0, host_between = 0, unexplained = 0;
    int64_t steps = 0, step_ns = 0;
    double launches_per_step = 0;
  };
  std::optional<Split> split;
  std::string summary;  // "idle 63%: 61 points host between launches (launch-bound, ...), 2 points after syncs"
};
struct GpuTime {
  std::string mode, reason;  // "" in a report from before the section
  std::vector<GpuTimeDevice> devices;
  std::vector<Finding> findings;  // each with recorded.device, recorded.title and recorded.diagnosis
};

// A device as the driver named it (report "devices"), and a framework the process loaded
// (report "frameworks"); both absent from reports written before those sections.
struct GpuName {
  int64_t device = 0;
  std::string name, compute_capability;
};
struct FrameworkVersion {
  std::string name, version, cuda;
};

// A per-process report, cudashim.report/1 (docs/report-schema.md).
// self_cost: what cudashim itself cost the process (reports since issue 33; none in older ones).
struct SelfCost {
  uint64_t threads_cpu_ns = 0, hooks_ns_estimate = 0, process_cpu_ns = 0;
  double share_of_cpu_pct = 0, share_of_wall_pct = 0;
  std::optional<double> steady_share_of_wall_pct;  // self_cost.steady (reports since issue 33.4's follow-up)
};

struct ProcessReport {
  int64_t pid = 0;
  std::optional<int64_t> rank;
  std::string host, exe, cudashim_version;
  std::vector<std::string> argv;
  uint64_t start_unix_ns = 0;
  std::optional<std::string> libcuda_loaded;
  int64_t driver_cuda_version = 0;   // driver.cuda_version (12090 = CUDA 12.9), 0 unknown
  std::optional<std::string> kernel_module;  // driver.kernel_module ("580.159.04"); none: unknown
  std::vector<GpuName> gpus;                 // devices[]
  std::vector<FrameworkVersion> frameworks;  // frameworks[]
  int64_t libcuda_dlopen_requests = 0;
  bool libcuda_loaded_null = false;  // driver.libcuda_loaded is present and null: no driver
  std::vector<ApiRow> api;           // sorted by name
  uint64_t wall_ns = 0, blocked_ns = 0;
  std::vector<Finding> findings, library_findings;
  std::vector<DeviceMemory> devices;
  std::vector<TorchSnapshot> torch;
  std::string torch_state;
  std::vector<LoadedLibrary> libraries;
  OomEvents oom;
  uint64_t leaked_allocations = 0, leaked_bytes = 0;
  std::vector<MemorySite> leaks;  // by site, largest first
  PolicyInForce policy;
  PoolStats pool;
  GpuTime gpu_time;
  std::optional<SelfCost> self_cost;
};

struct CrashCall {
  std::string api;
  int64_t result = 0;
};

struct CrashThread {
  int64_t tid = 0, calls = 0;
  std::vector<CrashCall> last_calls;
};

// One frame of the flight record's backtrace, and the module file it lies in.
struct CrashFrame {
  uint64_t address = 0;      // in the crashed process
  bool pc = false;           // the interrupted instruction itself, not a return address
  int64_t module = -1;       // index in CrashRecord::modules, -1 when no file held it
  uint64_t file_offset = 0;  // of the address in that module's file
  std::optional<std::string> source;  // resolved against the file now (report_reader.cpp)
};

struct CrashModule {
  std::string path;
  uint64_t base = 0, size = 0;
  int64_t mtime_ns = 0;
};

// A flight record, cudashim.crash/1 (docs/crash-schema.md).
struct CrashRecord {
  int64_t pid = 0;
  std::string reason, signal_name, fault_address, api;
  uint64_t result = 0;
  std::vector<CrashThread> threads;
  std::string backtrace_source;      // signal_frame, caller; "" in a record without a backtrace
  std::vector<CrashFrame> backtrace; // innermost first
  std::vector<CrashModule> modules;
};

// A snapshot or exit line of an event stream: the counters as of t_ns.
struct StreamCounters {
  uint64_t t_ns = 0, calls = 0, errors = 0, blocked_ns = 0;
  std::vector<DeviceMemory> devices;
};

// What an event stream said up to its last complete line, for a process that left no
// report (docs/outputs.md: cudashim.stream-summary/1).
struct StreamSummary {
  int64_t pid = 0;
  uint64_t lines = 0, last_t_ns = 0, libraries_loaded = 0;
  bool ended = false;
  std::optional<StreamCounters> last_counters;
  std::vector<std::string> findings;  // ids, as found while it ran
  uint64_t findings_left_out = 0;     // finding lines past kMaxStreamFindings
  std::optional<std::string> cut;     // what was not read, and why
  std::string signal;                 // the name on its last `signal` line ("SIGINT"), "" when none
};

// The finding lines a stream summary keeps (the shim writes one per finding and site).
inline constexpr size_t kMaxStreamFindings = 1000;

// Each reader fills its struct from `doc` through `fields`; the caller checks
// fields.problem() after it. pre: `fields` reads `doc`.
ProcessReport read_process_report(Fields& fields);
CrashRecord read_crash_record(Fields& fields);
// A gpu_health line of an event stream (docs/outputs.md): one device's health at t_ns, each
// field absent when NVML did not answer it.
struct GpuHealthPoint {
  uint64_t t_ns = 0;
  int64_t device = 0;
  std::optional<uint64_t> sm_mhz, mem_mhz, clock_event_reasons, temp_c, power_mw, power_limit_mw, mem_used_bytes;
};

// One line of an event stream: its type (""), t_ns and, for snapshot and exit lines,
// the counters; for gpu_health lines, the health.
struct StreamEvent {
  std::string type;
  std::optional<uint64_t> t_ns;
  int64_t pid = 0;        // start
  std::string id;         // finding
  std::string signal;     // signal: its name
  std::optional<StreamCounters> counters;  // snapshot, exit
  std::optional<GpuHealthPoint> health;    // gpu_health
};
StreamEvent read_stream_event(Fields& fields);

}  // namespace cudashim::tools
