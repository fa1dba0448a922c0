// init.cpp: start-up, fork and exit of the preloaded library, and the C API.
//
// The constructor does only cheap, lock-free work (it runs under the loader's lock; peers
// that hook CUDA with real work there deadlocked importing torch from conda): read the
// CUDASHIM_* options, note the process facts, register the fork handler. It prints
// nothing and stops nothing: what it has to say waits for the first CUDA use
// (shim/first_use.h). Real functions are resolved lazily by the hooks. The report is
// written at exit (or when SIGTERM or an abort ends the process: shim/terminate.h).
#include <pthread.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "policy/admission.h"
#include "policy/framework_env.h"
#include "policy/settings_load.h"
#include "policy/library_inventory.h"
#include "recorder/own_cost.h"
#include "recorder/event_stream.h"
#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/events.h"
#include "recorder/flight_recorder.h"
#include "recorder/library_log.h"
#include "recorder/no_cuda_record.h"
#include "recorder/clock.h"
#include "recorder/recorder.h"
#include "report/report.h"
#include "report/gpu_summary.h"
#include "report/summary.h"
#include "report/trace.h"
#include "shim/cudashim.h"
#include "shim/first_use.h"
#include "shim/fleet_publish.h"
#include "shim/cupti_collector.h"
#include "shim/gpu_sampler.h"
#include "shim/library_watch.h"
#include "shim/torch_counters.h"
#include "shim/log.h"
#include "shim/thread_flags.h"
#include "shim/report_writer.h"
#include "shim/sync_observer.h"
#include "shim/terminate.h"
#include "shim/wait_sampler.h"
#include "symbols/bounded_read.h"
#include "symbols/driver_bridge.h"
#include "symbols/walk_objects.h"

namespace cudashim::shim {

uint64_t real_total_bytes(int device);
void device_facts_tick();   // shim/device_facts.cpp
void device_facts_final();  // shim/device_facts.cpp
uint64_t real_free_bytes(int device);

std::atomic<int> g_log_level{1};
std::atomic<bool> g_inert{false};
std::atomic<bool> g_first_use_pending{false};

namespace {

// Heap objects that are never destroyed, set up by the constructor: a global with
// a C++ constructor could be initialized *after* our __attribute__((constructor))
// ran (the order inside .init_array is unspecified) and destroyed before our
// destructor writes the report.
recorder::ProcessInfo* g_info = nullptr;
std::string* g_out_dir = nullptr;
uint64_t g_start_ticks = 0;  // the hook clock at start-up: the trace's time zero
policy::Policy* g_policy = nullptr;                // the process policy, for the report
std::vector<policy::AppliedEnv>* g_applied = nullptr;  // framework settings it applied
bool g_report_enabled = true;
bool g_summary_enabled = true;  // output.summary: the exit summary on stderr (off under `cudashim run`)

// secure_getenv: in a setuid/setgid (AT_SECURE) process every CUDASHIM_* variable reads as
// unset, so a user cannot point a root process at a file (CUDASHIM_POLICY) or a folder; the
// machine's /etc/cudashim/policy.toml still applies. Elsewhere it is getenv.
const char* env_get(const char* name) { return secure_getenv(name); }

// What the constructor leaves for the first CUDA use (shim/first_use.h): its notices, in
// order, or the one line of a stop. Set before any second thread exists, never freed.
struct Deferred {
  std::vector<std::pair<LogLevel, std::string>> notices;
  std::string stop_line;  // non-empty: a malformed policy under on_invalid = "fail"
};
Deferred* g_deferred = nullptr;
std::atomic<bool> g_first_use_taken{false};

// Leaves the start-up notices and the stop of `loaded` for the first CUDA use.
void defer_to_first_use(const policy::LoadResult& loaded) {
  if (loaded.errors.empty() && loaded.warnings.empty()) return;
  if (g_deferred == nullptr) g_deferred = new Deferred;
  if (loaded.stop()) {
    g_deferred->stop_line = loaded.stop_line();  // the one line: bad settings would only add noise
  } else {
    for (const std::string& e : loaded.error_lines())
      g_deferred->notices.emplace_back(LogLevel::warn, "invalid policy (ignored: on_invalid = \"warn\"): " + e);
    for (const std::string& w : loaded.warnings) g_deferred->notices.emplace_back(LogLevel::warn, w);
  }
  g_first_use_pending.store(true, std::memory_order_relaxed);
}

// CUDASHIM_OUT made absolute once, at start-up: a program that changes its current folder
// must not split one process's outputs between two folders (issue 22.10: the stream, opened
// at the first CUDA call, in the first, the report at exit in the second). A current folder
// that cannot be read (deleted) leaves the path as it was given.
std::string absolute_out_dir(const std::string& dir) {
  if (!dir.empty() && dir[0] == '/') return dir;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr || cwd[0] != '/') return dir;
  if (dir.empty() || dir == ".") return cwd;
  return std::string(cwd) + "/" + dir;
}

void setup_process() {
  policy::LoadResult loaded = policy::load_policy(env_get);
  // A misspelled CUDASHIM_MEMCAP is one warning at the first CUDA use, like a bad value
  // (none in a setuid process, which reads no CUDASHIM_* variable at all).
  if (getauxval(AT_SECURE) == 0) policy::warn_unknown_variables(loaded, environ);
  // shim/log.h counts its levels from -1 (off); the setting's words start at off.
  g_log_level.store(static_cast<int>(loaded.policy.settings.log_level) - 1, std::memory_order_relaxed);
  defer_to_first_use(loaded);
  // A malformed policy under on_invalid = "fail": until its first CUDA call stops it, the
  // process runs under the table's defaults, as if there were no policy (none of its
  // settings, framework variables included, is applied on the way).
  if (loaded.stop()) loaded.policy.settings = policy::Settings{};
  const policy::Settings& s = loaded.policy.settings;
  // AT_SECURE: a setuid/setgid program must not be steered by the environment.
  const bool secure = getauxval(AT_SECURE) != 0;
  const bool inert = s.disable || secure;
  g_inert.store(inert, std::memory_order_relaxed);
  g_report_enabled = s.report && !inert;
  g_summary_enabled = s.summary;
  if (g_out_dir == nullptr) g_out_dir = new std::string;
  if (g_info == nullptr) g_info = new recorder::ProcessInfo;
  if (g_policy == nullptr) g_policy = new policy::Policy;
  if (g_applied == nullptr) g_applied = new std::vector<policy::AppliedEnv>;
  *g_policy = loaded.policy;
  policy::install_process_settings(s);
  *g_out_dir = absolute_out_dir(s.out);
  recorder::capture_process_info(*g_info);
  // Under `cudashim run`: the one line this process leaves should it end without a CUDA call.
  recorder::no_cuda_configure(s.no_cuda_record && !inert, g_out_dir->c_str(), *g_info);
  if (!inert) {
    recorder::flight_configure(g_out_dir->c_str(), g_info->host.c_str(), g_info->pid, g_info->rank);
    recorder::stream_configure(g_out_dir->c_str(), g_info->host.c_str(), g_info->pid, g_info->rank);
  }
  if (inert) {
    policy::configure_admission(policy::Settings{}, {nullptr, nullptr});  // the table's defaults, not the environment's
    return;
  }
  policy::configure_admission(s, {real_total_bytes, real_free_bytes});
  policy::configure_sync(s);
  torch_counters_configure(s.torch_counters);
  gpu_sampler_configure(s);
  cupti_configure(s);
  fleet_configure(s, *g_info);
  if (const char* lb = std::getenv("CUDA_LAUNCH_BLOCKING"); lb != nullptr && std::strcmp(lb, "1") == 0)
    recorder::count_event(recorder::Event::launch_blocking_env);
  const auto applied = policy::apply_framework_env(s);
  for (const auto& a : applied)
    log_message(LogLevel::info, "policy set {}={}{}", a.name, a.value, a.forced ? " (replacing the job's value)" : "");
  *g_applied = applied;
}

// fork() waits until our threads' calls into the loader (walks, dlopen, dlclose) have ended
// (symbols/walk_objects.h: glibc resets neither the walk's lock nor r_debug's state in the
// child). Bounded: 100 ms at most, then the fork goes on anyway. Waiting without bound could
// deadlock against an allocator's own fork handler (jemalloc, tcmalloc lock their arenas
// in theirs) while our walk allocates.
thread_local bool t_fork_locked = false;
void before_fork() {
  for (int i = 0; i < 100 && !(t_fork_locked = pthread_rwlock_trywrlock(symbols::loader_gate()) == 0); ++i) usleep(1000);
}
void after_fork_parent() {
  if (t_fork_locked) pthread_rwlock_unlock(symbols::loader_gate());
  t_fork_locked = false;
}

// A forked child (a DataLoader worker) starts with clean counters and its own
// identity; nothing it inherits is a held lock or a finished set-up (fork(2),
// pthread_atfork(3)).
void after_fork_child() {
  // A fresh gate: taken by before_fork() in this very thread, or (after its 100 ms) still read
  // by parent threads that do not exist here.
  *symbols::loader_gate() = PTHREAD_RWLOCK_INITIALIZER;
  t_fork_locked = false;
  // Forked while another thread was handling the first CUDA use: that thread is not here.
  if (g_first_use_pending.load(std::memory_order_relaxed)) g_first_use_taken.store(false, std::memory_order_relaxed);
  recorder::reset_all();
  recorder::release_slot_after_fork();  // this thread's next hooked call claims a slot, and so starts the child's stream
  recorder::sites_reset();
  recorder::own_threads_reset();  // the parent's own threads are not in this process
  g_flags.drained_site = nullptr;  // a drain of the parent's, at a site of the table just emptied
  recorder::library_log_reset();
  policy::library_inventory_reset();
  termination_after_fork();
  wait_sampler_after_fork();
  if (g_info != nullptr) {
    recorder::capture_process_info(*g_info);
    recorder::no_cuda_configure(policy::process_settings().no_cuda_record && !g_inert.load(), g_out_dir->c_str(), *g_info);
    if (!g_inert.load()) {
      recorder::flight_configure(g_out_dir->c_str(), g_info->host.c_str(), g_info->pid, g_info->rank);
      recorder::stream_configure(g_out_dir->c_str(), g_info->host.c_str(), g_info->pid, g_info->rank);
      fleet_configure(policy::process_settings(), *g_info);
    }
    g_start_ticks = now_ticks();
  }
}

}  // namespace

void first_cuda_use() {
  if (g_first_use_taken.exchange(true, std::memory_order_acq_rel)) {
    // Another thread is handling it. Under a stop it is about to end the process: this
    // thread must not reach CUDA meanwhile.
    if (g_deferred != nullptr && !g_deferred->stop_line.empty())
      for (;;) pause();
    return;
  }
  if (g_deferred != nullptr) {
    if (!g_deferred->stop_line.empty()) {
      log_message(LogLevel::error, "{}", g_deferred->stop_line);
      _exit(78);  // EX_CONFIG (sysexits.h)
    }
    for (const auto& [level, text] : g_deferred->notices) log_message(level, "{}", text);
  }
  g_first_use_pending.store(false, std::memory_order_relaxed);
}

namespace {

// What the report says of the process's environment, read now (the job may have set a
// variable since start-up: torch sets CUDA_MODULE_LOADING at import): the report layer reads
// neither the environment nor /proc.
report::ReportEnvironment report_environment() {
  report::ReportEnvironment e;
  if (const char* v = std::getenv("CUDA_MODULE_LOADING")) e.cuda_module_loading = v;
  if (const char* v = std::getenv("CUDA_INJECTION64_PATH")) e.cuda_injection64_path = v;
  if (auto text = symbols::read_regular(policy::process_settings().driver_version_file, symbols::kKernelVersionFileLimit))
    e.kernel_module = symbols::parse_kernel_module_version(text.value());
  return e;
}

// Writes the report to `path`; `findings`: the runtime findings already evaluated for this
// end (the exit path's summary), nullptr to evaluate them here. Returns 0 or -errno.
// `gpu`: the GPU time decided for this end (the summary's), nullptr to decide it here.
int write_report_to(const std::string& path, const std::vector<Finding>* findings = nullptr,
                    const policy::GpuTimeResult* gpu = nullptr) {
  try {
    if (g_info == nullptr) return -EINVAL;
    library_watch_final();  // the inventory as of now; new findings are logged once
    device_facts_final();
    return write_file_atomically(
        path, report::render_report({*g_info, g_policy, g_applied, findings, report_environment(), gpu}));
  } catch (const std::exception&) {
    return -ENOMEM;
  }
}

void write_final_outputs();

// Why an output was not written, from write_file_atomically's -errno: EFBIG names the limit
// the user set (recorder::file_room: the file would pass `ulimit -f`), the rest strerror.
const char* why_not_written(int rc) {
  if (rc == -EFBIG) return "it is larger than the process's file-size limit (ulimit -f); nothing was written";
  return std::strerror(-rc);
}

__attribute__((constructor)) void cudashim_start() {
  log_capture_stderr();  // before any line: what the job's stderr is (shim/log.h)
  clock_init();
  g_start_ticks = now_ticks();
  setup_process();
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  // Each with its name in the report's self_cost.parts (docs/report-schema.md).
  recorder::stream_set_tick(library_watch_tick, "library_watch");
  recorder::stream_add_tick(gpu_sampler_tick, "gpu_sampler");
  recorder::stream_add_tick(device_facts_tick, "device_facts");
  recorder::stream_add_tick(cupti_tick, "cupti");
  recorder::stream_add_tick(wait_sampler_tick, "wait_sampler");
  recorder::stream_add_tick(judge_pending_sites, "judge_sites");  // the live findings' lines (shim/sync_observer.h)
  recorder::stream_add_tick(fleet_tick, "fleet");                 // the live fleet record (shim/fleet_publish.h)
  termination_configure(write_final_outputs, g_report_enabled);
  log_message(LogLevel::debug, "loaded into pid {} ({})", g_info->pid, g_info->exe);
}

// The outputs of a process that made a CUDA call: the stream's last line, the report,
// the trace. Runs once per process (shim/terminate.h): at exit, or on the flush thread
// when SIGTERM or SIGABRT ends the process; the report comes before the trace so that a
// signal's deadline is spent on it first.
void write_final_outputs() {
  judge_pending_sites();  // the live lines still due, before the summary and the stream's last line
  if (g_info == nullptr || !recorder::has_activity()) return;
  if (!g_report_enabled || g_out_dir == nullptr) {
    fleet_final(nullptr, nullptr);
    return;
  }
  const std::string path = default_report_path(*g_out_dir, *g_info);
  library_watch_final();  // its last library events go into the stream before the exit line
  cupti_finish();         // CUPTI's last records, before the report reads them
  recorder::stream_finish();
  // The rules run once for this end: the summary and the report show the same findings.
  std::vector<Finding> findings;
  bool evaluated = false;
  try {
    findings = policy::evaluate_findings();
    evaluated = true;
  } catch (...) {
  }
  // The GPU time and its diagnosis, decided once for the summary and the report.
  std::unique_ptr<policy::GpuTimeResult> gpu;
  if (evaluated) {
    try {
      auto totals = std::make_unique<recorder::CounterTotals>();
      recorder::sum_slots(*totals);
      gpu = std::make_unique<policy::GpuTimeResult>(policy::evaluate_gpu_time(
          findings, *totals, g_info->start_mono_ns, monotonic_ns() - g_info->start_mono_ns));
    } catch (...) {
    }
  }
  if (g_summary_enabled && evaluated) {
    try {
      bool any_warning = false;  // only info findings: an info line, below the default level
      std::string summary =
          report::findings_summary_text(findings, monotonic_ns() - g_info->start_mono_ns, &any_warning);
      const std::string idle = gpu ? report::gpu_idle_summary_text(gpu->devices) : std::string();
      any_warning = any_warning || !idle.empty();  // gpu.idle is a warning
      summary += idle;
      if (!summary.empty()) {
        // What cudashim itself cost, under the findings (issue 33.4; the report's self_cost).
        const std::string all = summary + report::self_cost_text(monotonic_ns() - g_info->start_mono_ns);
        log_message(any_warning ? LogLevel::warn : LogLevel::info, "findings for pid {}, by blocked time (details: {}):\n{}",
                    g_info->pid, path, all.substr(0, all.size() - 1));
      }
    } catch (...) {
    }
  }
  fleet_final(evaluated ? &findings : nullptr, gpu.get());  // the record's last state: the report's findings and GPU time
  const int rc = write_report_to(path, evaluated ? &findings : nullptr, gpu.get());
  if (rc != 0)
    log_message(LogLevel::warn, "could not write the report {}: {}; the job's own result is unaffected", path,
                why_not_written(rc));
  else
    log_message(LogLevel::info, "report written to {}", path);
  try {
    // The timeline next to the report: cudashim-<host>-<pid>[-r<rank>].trace, Chrome's JSON
    // trace format (ui.perfetto.dev and chrome://tracing open it whatever its extension).
    const std::string trace = path.substr(0, path.size() - 5) + ".trace";
    const int trc = write_file_atomically(trace, report::render_trace(g_info->pid, g_start_ticks, g_info->start_mono_ns));
    // Said, not dropped (issue 22.10: a full disk lost the trace without a word); when the
    // report could not be written either, its line already named the folder's problem.
    // A file-size limit is the trace's own (each file has it): said even when the report failed too.
    if (trc != 0 && (rc == 0 || trc == -EFBIG))
      log_message(LogLevel::warn, "could not write the trace {}: {}; {}the job's own result is unaffected", trace,
                  why_not_written(trc), rc == 0 ? "the report has the same calls; " : "");
  } catch (const std::exception& e) {
    log_message(LogLevel::warn, "could not write the trace for pid {}: {}", g_info->pid, e.what());
  }
}

// A process that made no CUDA call writes nothing here, but its one line under `cudashim run`
// (recorder/no_cuda_record.h). Not in write_final_outputs: an exec runs that too, and the
// process goes on as another program.
__attribute__((destructor)) void cudashim_stop() {
  termination_write_once();
  recorder::no_cuda_note_end();
}

}  // namespace
}  // namespace cudashim::shim

using namespace cudashim::shim;

extern "C" __attribute__((visibility("default"))) const char* cudashim_version(void) { return CUDASHIM_VERSION; }

extern "C" __attribute__((visibility("default"))) int cudashim_write_report(const char* path) {
  try {
    if (g_info == nullptr) return -EINVAL;
    const std::string p = path ? std::string(path) : default_report_path(g_out_dir ? *g_out_dir : ".", *g_info);
    return write_report_to(p);
  } catch (...) {
    return -ENOMEM;
  }
}

extern "C" __attribute__((visibility("default"))) int cudashim_set_call_sites(int on) {
  return cudashim::shim::set_call_sites(on) ? 1 : 0;
}

extern "C" __attribute__((visibility("default"))) unsigned long long cudashim_api_calls(const char* abi_name) {
  if (abi_name == nullptr) return 0;
  const cudashim::HookId id = cudashim::find_hook(abi_name);
  if (id == cudashim::HookId::kCount) return 0;
  return cudashim::recorder::calls_of(static_cast<size_t>(id));
}
