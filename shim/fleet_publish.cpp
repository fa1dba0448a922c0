// fleet_publish.cpp: the process's fleet record (shim/fleet_publish.h, catalog/fleet_record.h).
//
// The record lives in one heap object set up at start-up and is filled and written only on
// the flush thread (and once at the end, by whichever thread writes the outputs): the
// hooks never see it. Each publish writes <dir>/.<name>.tmp and renames it over <dir>/<name>,
// so a reader sees a whole record (rename(2)); tmpfs makes it a few microseconds.
#include "shim/fleet_publish.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>

#include "catalog/fleet_record.h"
#include "catalog/hooks.h"
#include "policy/admission.h"
#include "policy/library_inventory.h"
#include "policy/rules/gpu_time.h"
#include "policy/sync_rules.h"
#include "recorder/clock.h"
#include "recorder/devices.h"
#include "recorder/fleet_identity.h"
#include "recorder/gpu_samples.h"
#include "recorder/ledger.h"
#include "recorder/oom.h"
#include "recorder/thread_slots.h"
#include "shim/log.h"
#include "shim/terminate.h"

namespace cudashim::shim {
namespace {

constexpr int kSlowEveryTicks = 5;  // findings and GPU time: every 5th tick (they walk tables)

struct Publisher {
  std::string dir, path, tmp;  // "" dir: off
  FleetRecord rec;
  uint64_t start_mono_ns = 0;
  uint64_t ticks = 0;
  bool identity_read = false;
  bool given_up = false;
};
Publisher* g_fleet = nullptr;  // never freed (read by the exit path after static destructors)
std::atomic<bool> g_fleet_final{false};
std::atomic<bool> g_fleet_busy{false};  // a publish is under way (the tick, or the end on another thread)

const char* env_get(const char* name) { return secure_getenv(name); }

template <size_t N>
void copy_text(char (&dst)[N], const std::string& src) {
  const size_t n = std::min(src.size(), N - 1);
  std::memcpy(dst, src.data(), n);
  std::memset(dst + n, 0, N - n);
}

// Field 22 of /proc/self/stat (the start time in clock ticks since boot), 0 when unreadable.
uint64_t start_ticks_of_self() {
  char buf[1024];
  const int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return 0;
  // the 20th blank after ")" starts field 22
  for (int field = 2; field < 22 && p != nullptr; ++field) p = std::strchr(p + 1, ' ');
  return p ? std::strtoull(p + 1, nullptr, 10) : 0;
}

// The folder of fleet.dir: "auto" -> $XDG_RUNTIME_DIR/cudashim, else /run/cudashim when it is
// a writable folder; "off" or "" -> none. Created (0700) when missing, its parent must exist.
std::string resolve_dir(const std::string& setting) {
  if (setting.empty() || setting == "off") return {};
  std::string dir = setting;
  if (setting == "auto") {
    const char* xdg = env_get("XDG_RUNTIME_DIR");
    if (xdg != nullptr && xdg[0] == '/')
      dir = std::string(xdg) + "/cudashim";
    else if (access("/run/cudashim", W_OK | X_OK) == 0)
      return "/run/cudashim";
    else
      return {};
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return {};
  return dir;
}

void fill_identity(FleetRecord& r) {
  const recorder::FleetIdentity id = recorder::read_fleet_identity(env_get);
  copy_text(r.slurm_job_id, id.slurm_job_id);
  copy_text(r.slurm_step, id.slurm_step);
  copy_text(r.pod, id.pod);
  copy_text(r.pod_namespace, id.pod_namespace);
  copy_text(r.container, id.container);
  copy_text(r.pod_uid, id.pod_uid);
}

void fill_counters(FleetRecord& r) {
  auto totals = std::make_unique<recorder::CounterTotals>();
  recorder::sum_slots(*totals);
  uint64_t calls = 0, errors = 0, launches = 0;
  for (size_t h = 0; h < kHookCount; ++h) {
    calls += totals->calls[h], errors += totals->errors[h];
    if (hook_info(static_cast<HookId>(h)).family == Family::launch) launches += totals->calls[h];
  }
  auto set = [&](FleetValue v, uint64_t x) { r.values[static_cast<size_t>(v)] = x; };
  set(FleetValue::wall_ns, monotonic_ns() - g_fleet->start_mono_ns);
  set(FleetValue::blocked_ns, ticks_to_ns(totals->blocked_outer_ns));
  set(FleetValue::cuda_calls, calls);
  set(FleetValue::cuda_errors, errors);
  set(FleetValue::launches, launches);
  const recorder::OomSummary oom = recorder::oom_summary();
  set(FleetValue::ooms, oom.count);
  set(FleetValue::caps_hit, oom.denied);
  set(FleetValue::ended_by_signal, termination_signal() != 0 ? 1 : 0);
  // The devices that ever held memory, with what device_facts.cpp learned of each.
  recorder::DeviceStats d[kFleetMaxDevices + 1];
  const int n = recorder::ledger_devices(d, kFleetMaxDevices + 1);
  int facts_n = 0;
  const recorder::DeviceFacts* facts = recorder::devices(&facts_n);
  uint32_t k = 0;
  for (int i = 0; i < n && k < kFleetMaxDevices; ++i) {
    if (d[i].device == kHostDevice || d[i].device < 0) continue;  // host memory
    FleetDevice& fd = r.devices[k++];
    const bool same = fd.ordinal == d[i].device;
    if (!same) fd = FleetDevice{}, fd.ordinal = d[i].device;
    for (int f = 0; f < facts_n; ++f)
      if (facts[f].ordinal == d[i].device) copy_text(fd.pci_bus_id, facts[f].pci_bus_id), copy_text(fd.name, facts[f].name);
    fd.values[static_cast<size_t>(FleetDeviceValue::mem_used)] = d[i].live_bytes;
    fd.values[static_cast<size_t>(FleetDeviceValue::mem_peak)] = d[i].peak_bytes;
    fd.values[static_cast<size_t>(FleetDeviceValue::mem_cap)] = policy::cap_of(d[i].device);
  }
  r.device_count = std::max(r.device_count, k);
}

void add_finding(FleetRecord& r, const char* id, Severity sev, uint64_t count, uint64_t blocked_ns) {
  if (r.finding_count >= kFleetMaxFindings) return;
  FleetFinding& f = r.findings[r.finding_count++];
  copy_text(f.id, id);
  copy_text(f.severity, severity_name(sev));
  f.count = count, f.blocked_ns = blocked_ns;
}

// The GPU time of each device so far, decided as the report decides it at exit
// (policy::evaluate_gpu_time: NVML's samples, the idle split and its diagnosis); its gpu.*
// findings are added to the record's.
// `given`: the exit path's one evaluation, else evaluated here (the live record).
void fill_gpu_time(FleetRecord& r, const std::vector<Finding>& runtime, const policy::GpuTimeResult* given) {
  policy::GpuTimeResult evaluated;
  if (given == nullptr) {
    const auto totals = std::make_unique<recorder::CounterTotals>();  // large: not on the flush thread's stack
    recorder::sum_slots(*totals);
    const uint64_t now = monotonic_ns();
    evaluated = policy::evaluate_gpu_time(runtime, *totals, g_fleet->start_mono_ns, now - g_fleet->start_mono_ns);
  }
  const auto& devices = (given ? *given : evaluated).devices;
  for (const auto& d : devices) {
    for (const Finding& f : d.findings) add_finding(r, f.info().name, f.severity(), 0, 0);
    // A share from too few samples ("unknown") would be served as a fact on a dashboard.
    if (d.steady.samples == 0 || std::strcmp(d.diagnosis, "unknown") == 0) continue;
    for (uint32_t k = 0; k < r.device_count; ++k) {
      FleetDevice& fd = r.devices[k];
      if (fd.ordinal != d.device) continue;
      const auto busy = static_cast<uint64_t>(std::min(1.0, std::max(0.0, d.steady.busy)) * 1e6 + 0.5);
      fd.values[static_cast<size_t>(FleetDeviceValue::busy_ppm)] = busy;
      fd.values[static_cast<size_t>(FleetDeviceValue::idle_ppm)] = 1000000 - busy;
      copy_text(fd.diagnosis, d.diagnosis);
      fd.has_share = 1;
    }
  }
}

// The findings so far: the runtime rules' (evaluated here unless given), the live library
// inventory's and the GPU time's.
void fill_findings(FleetRecord& r, const std::vector<Finding>* given, const policy::GpuTimeResult* gpu) {
  std::vector<Finding> evaluated;
  if (given == nullptr) evaluated = policy::evaluate_findings();
  const std::vector<Finding>& runtime = given ? *given : evaluated;
  r.finding_count = 0;
  uint64_t warnings = 0;
  for (const Finding& f : runtime) {
    add_finding(r, finding_info(f.id).name, f.severity(), f.count, f.blocked_ns);
    if (f.severity() != Severity::info) ++warnings;
  }
  const policy::LibraryInventory inv = policy::library_inventory();
  for (const Finding& f : inv.findings) add_finding(r, finding_info(f.id).name, f.severity(), 0, 0);
  r.values[static_cast<size_t>(FleetValue::library_findings)] = inv.findings.size();
  r.values[static_cast<size_t>(FleetValue::warnings)] = warnings;
  fill_gpu_time(r, runtime, gpu);
}

// Writes the record: the temporary file, then the rename. Returns 0 or errno.
int write_record(FleetRecord& r) {
  r.seq += 1;
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  r.written_unix_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  r.checksum = fleet_checksum(r);
  const int fd = open(g_fleet->tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return errno;
  const auto* p = reinterpret_cast<const char*>(&r);
  size_t done = 0;
  while (done < sizeof r) {
    const ssize_t w = write(fd, p + done, sizeof r - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  const int werr = done == sizeof r ? 0 : (errno ? errno : EIO);
  close(fd);
  if (werr == 0 && rename(g_fleet->tmp.c_str(), g_fleet->path.c_str()) == 0) return 0;
  const int err = werr ? werr : errno;
  unlink(g_fleet->tmp.c_str());
  return err;
}

void publish(bool slow, const std::vector<Finding>* findings, const policy::GpuTimeResult* gpu) {
  FleetRecord& r = g_fleet->rec;
  if (!g_fleet->identity_read) fill_identity(r), g_fleet->identity_read = true;
  fill_counters(r);
  if (slow) fill_findings(r, findings, gpu);
  if (const int err = write_record(r); err != 0) {
    g_fleet->given_up = true;
    log_message(LogLevel::warn, "cannot write the fleet record {}: {}; no more fleet records from this process "
                "(fleet.dir, docs/fleet.md); the job's own result is unaffected", g_fleet->path, std::strerror(err));
  }
}

}  // namespace

void fleet_configure(const policy::Settings& s, const recorder::ProcessInfo& info) {
  if (g_fleet == nullptr) g_fleet = new Publisher;
  Publisher& f = *g_fleet;
  f = Publisher{};
  g_fleet_final.store(false);
  g_fleet_busy.store(false);  // a child forked during its parent's publish: that publish is not here
  f.dir = resolve_dir(s.fleet_dir);
  if (f.dir.empty()) return;
  FleetRecord& r = f.rec;
  std::memcpy(r.magic, kFleetMagic, sizeof r.magic);
  r.version = kFleetVersion, r.size = sizeof(FleetRecord), r.state = static_cast<uint32_t>(FleetState::running);
  r.pid = info.pid, r.uid = getuid(), r.rank = info.rank;
  r.start_ticks = start_ticks_of_self();
  const size_t slash = info.exe.rfind('/');
  copy_text(r.exe, slash == std::string::npos ? info.exe : info.exe.substr(slash + 1));
  f.start_mono_ns = info.start_mono_ns;
  const std::string name = std::to_string(info.pid) + "-" + std::to_string(r.start_ticks) + ".rec";
  f.path = f.dir + "/" + name;
  f.tmp = f.dir + "/." + name + ".tmp";
}

void fleet_tick() {
  if (g_fleet == nullptr || g_fleet->dir.empty() || g_fleet->given_up || g_fleet_final.load()) return;
  if (g_fleet_busy.exchange(true)) return;
  try {
    const bool slow = g_fleet->ticks++ % kSlowEveryTicks == 0;
    publish(slow, nullptr, nullptr);
  } catch (...) {
  }
  g_fleet_busy.store(false);
}

void fleet_final(const std::vector<Finding>* findings, const policy::GpuTimeResult* gpu) {
  if (g_fleet == nullptr || g_fleet->dir.empty() || g_fleet->given_up) return;
  if (g_fleet_final.exchange(true)) return;
  // The tick may be publishing on the flush thread: wait for it (at most 200 ms).
  for (int i = 0; i < 200 && g_fleet_busy.exchange(true); ++i) usleep(1000);
  try {
    g_fleet->rec.state = static_cast<uint32_t>(FleetState::exited);
    publish(true, findings, gpu);
  } catch (...) {
  }
  g_fleet_busy.store(false);
}

}  // namespace cudashim::shim
