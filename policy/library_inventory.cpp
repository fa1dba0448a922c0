// library_inventory.cpp: see library_inventory.h. (The hook side that feeds it is shim/library_watch.cpp;
// what it records, recorder/library_log.h; its rules, policy/rules/libraries.h.)
#include "policy/library_inventory.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "policy/rules/driver.h"
#include "policy/rules/libraries.h"
#include "policy/rules/toolchain.h"
#include "policy/printable.h"
#include "policy/settings_load.h"
#include "recorder/clock.h"
#include "recorder/event_stream.h"
#include "recorder/events.h"
#include "recorder/library_log.h"
#include "symbols/bounded_read.h"
#include "symbols/driver_bridge.h"
#include "symbols/ld_cache.h"
#include "symbols/loaded_libraries.h"
#include "symbols/triton_toolchain.h"
#include "symbols/walk_objects.h"

namespace cudashim::policy {
namespace {

using symbols::LoadedLibrary;

struct State {
  unsigned long long adds = 0, subs = 0;
  bool scanned = false;
  uint64_t dl_hint = 0;  // dlopen + dlclose calls seen by the trampolines at the last walk
  int quiet_walks = 0;   // walks since that count last changed
  std::vector<LoadedLibrary> libs;
  std::vector<Finding> findings;
  std::set<std::string> announced;  // "<id>|<subject>" already logged
  std::vector<LibraryEvent> events;
  uint64_t t0_ns = 0;
  uint64_t modules_seen = ~0ull;  // module loads counted at the last re-read
  std::vector<Finding> bridge;     // driver bridge: once libcuda is loaded
  bool bridge_done = false;
  std::vector<Finding> triton;     // Triton's toolchain: once it is loaded and the SM is known
  bool triton_done = false;
  std::vector<Finding> shortfalls;  // versioned imports the loaded providers lack (per re-read)
  int driver_version = 0;           // the last one a re-read was given (LiveDriverFacts)
};
constinit std::mutex g_mutex;
State* g_state = nullptr;  // never destroyed: used by the exit path
// Mirrors of the driver bridge's state, read before the lock is taken (libraries_rescan).
constinit std::atomic<bool> g_bridge_wanted{false};  // libcuda is loaded, the bridge not yet checked
constinit std::atomic<bool> g_bridge_done{false};

State& state() {
  if (g_state == nullptr) {
    g_state = new State;
    g_state->t0_ns = monotonic_ns();
  }
  return *g_state;
}

std::string module_of(const void* addr) {
  Dl_info info;
  if (addr == nullptr || dladdr(addr, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

bool named(const std::string& path, const char* prefix) {
  const size_t slash = path.rfind('/');
  return path.compare(slash == std::string::npos ? 0 : slash + 1, std::strlen(prefix), prefix) == 0;
}

symbols::InventoryHints hints() {
  symbols::InventoryHints h;
  for (const auto& r : recorder::dlopen_requests()) h.dlopens.push_back({r.name, module_of(r.caller)});
  const std::string self = module_of(reinterpret_cast<const void*>(&libraries_rescan));
  std::map<std::string, int> statics;
  for (const auto& c : recorder::procaddr_callers()) {
    const std::string m = module_of(c.caller);
    // libcudart (every copy) and the driver call cuGetProcAddress as themselves;
    // any other module doing so carries a CUDA runtime of its own.
    if (m.empty() || m == self || named(m, "libcudart.so") || named(m, "libcuda.so")) continue;
    statics[m] = std::max(statics[m], c.cuda_version);
  }
  for (const auto& [m, v] : statics) h.static_runtimes.emplace_back(m, v);
  if (const char* l = std::getenv("LD_LIBRARY_PATH")) h.ld_library_path = l;
  return h;
}

// The loader's own counters of objects added and removed (cheap to read).
void loader_counts(unsigned long long& adds, unsigned long long& subs) {
  struct Counts {
    unsigned long long adds = 0, subs = 0;
  } c;
  symbols::walk_objects(
      [](dl_phdr_info* info, size_t size, void* data) -> int {
        auto* c = static_cast<Counts*>(data);
        if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) c->adds = info->dlpi_adds, c->subs = info->dlpi_subs;
        return 1;  // the first object is enough
      },
      &c);
  adds = c.adds, subs = c.subs;
}

// What the driver-bridge check reads from files, read before the inventory's lock is taken:
// the exit path takes that lock, and a read must never hold it (a FIFO named by
// CUDASHIM_DRIVER_VERSION_FILE once blocked the flush thread there and hung the job at exit).
struct BridgeFiles {
  std::string version_source;
  std::optional<std::string> version_text;  // nullopt: absent or refused
  std::string problem;                      // why a version file that exists was not read; "" if it was
  std::vector<std::string> mounts;
};

BridgeFiles read_bridge_files() {
  BridgeFiles f;
  f.version_source = process_settings().driver_version_file;
  int err = 0;
  auto v = symbols::read_regular(f.version_source, symbols::kKernelVersionFileLimit, nullptr, &err);
  if (v)
    f.version_text = std::move(v).value();
  else if (err != ENOENT)  // no kernel module (a machine without a GPU, a test) is no problem
    f.problem = fmt::format("CUDASHIM_DRIVER_VERSION_FILE={}: the driver-bridge check is skipped; name the kernel "
                            "module's version file, a regular file of at most {} (default /proc/driver/nvidia/version)",
                            printable(v.error()), symbols::size_text(symbols::kKernelVersionFileLimit));
  bool truncated = false;  // the mounts past the limit are not looked at
  if (auto m = symbols::read_regular("/proc/self/mountinfo", symbols::kMountinfoLimit, &truncated))
    f.mounts = symbols::mount_points(m.value());
  return f;
}

// The container's driver bridge, live: the kernel module's version file against the
// libcuda this process loaded (and whether that file is a bind mount from the host).
std::vector<Finding> driver_bridge_live(const std::vector<LoadedLibrary>& libs, const BridgeFiles& files) {
  symbols::DriverBridgeInput in;
  in.kernel_version_source = files.version_source;
  in.kernel_version_text = files.version_text;
  const std::vector<std::string>& mounts = files.mounts;
  std::set<std::string> seen;
  for (const auto& l : libs) {
    if (l.family != "cuda" || !seen.insert(l.real).second) continue;
    symbols::LibcudaCopy c{l.path, l.real, false, true};
    for (const auto& m : mounts) c.bind_mounted = c.bind_mounted || m == l.path || m == l.real;
    in.libcuda.push_back(c);
  }
  if (in.libcuda.empty()) return {};
  return driver_bridge_findings(in);
}

// Triton's toolchain, live: once Triton's native library is loaded and the device's
// SM is known (from a module load), its ptxas and libcuda discovery are checked once.
std::string loaded_triton_package() {
  for (const std::string& path : symbols::loaded_object_paths())
    if (const size_t hit = path.find("/triton/_C/libtriton"); hit != std::string::npos)
      return path.substr(0, hit + std::strlen("/triton"));
  return "";
}

std::vector<Finding> triton_live(const std::string& package, int sm, bool driver_loaded) {
  auto cache = symbols::read_ld_cache();
  const char* ldp = std::getenv("LD_LIBRARY_PATH");
  const symbols::TritonInput in = symbols::read_triton_input(
      package, sm, [](const char* n) -> const char* { return std::getenv(n); }, cache ? &cache.value() : nullptr,
      ldp ? ldp : "",
#if defined(__aarch64__)
      {"/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/lib"},
#else
      {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/lib"},
#endif
      driver_loaded);
  return triton_findings(in).findings;
}

// Walks the loaded objects again: the libraries that came and went since the last walk go to
// the events and the stream, and the versioned imports are checked against the new set.
void reread_libraries(State& s) {
  std::vector<LoadedLibrary> now = symbols::loaded_cuda_libraries(hints());
  std::set<std::string> before, after;
  for (const auto& l : s.libs) before.insert(l.real + "|" + l.linkage);
  for (const auto& l : now) after.insert(l.real + "|" + l.linkage);
  const uint64_t t = monotonic_ns();
  for (const auto& l : now)
    if (!before.count(l.real + "|" + l.linkage)) {
      s.events.push_back({t, true, l.real, l.family, l.version});
      recorder::stream_event(recorder::LibraryLoadEvent{l});
    }
  for (const auto& l : s.libs)
    if (!after.count(l.real + "|" + l.linkage)) {
      s.events.push_back({t, false, l.real, l.family, l.version});
      recorder::stream_event(recorder::LibraryUnloadEvent{l.real});
    }
  s.libs = std::move(now);
  s.shortfalls = missing_import_findings(symbols::missing_versioned_imports(s.libs));
}

// The library rules (policy/rules/libraries.h) over the loaded set, the module loads and the
// CUDA environment as this process has it.
std::vector<Finding> library_findings(const std::vector<LoadedLibrary>& libs, int driver_version,
                                      const recorder::ModuleTotals& totals, const std::vector<recorder::ModuleLoad>& loads) {
  std::vector<Finding> findings = loaded_library_findings(libs);
  RuleInputs in;
  in.libraries = &libs;
  in.driver_version = driver_version;
  in.modules = totals;
  in.loads = &loads;
  in.module_loading = std::getenv("CUDA_MODULE_LOADING");
  in.cache_disable = std::getenv("CUDA_CACHE_DISABLE");
  in.cache_path = std::getenv("CUDA_CACHE_PATH");
  in.cache_maxsize = std::getenv("CUDA_CACHE_MAXSIZE");
  in.home = std::getenv("HOME");
  for (auto& f : live_library_rules(in)) findings.push_back(std::move(f));
  return findings;
}

// Logs each finding once (by id and subject) and sends it to the stream.
void announce(State& s, const std::vector<Finding>& findings, bool final_read, std::vector<LiveLine>& lines) {
  for (const auto& f : findings) {
    // A run's total changes with every load: named once, at the last re-read, where its figure
    // is the report's (a live line at the tick that crossed the threshold differed from run to run).
    if (f.run_total && !final_read) continue;
    if (!s.announced.insert(std::string(f.info().name) + "|" + f.subject).second) continue;
    std::string files;
    for (const auto& e : f.evidence) files += (files.empty() ? "" : "; ") + e;
    lines.push_back({f.severity(), fmt::format("[{}] {}: {}; fix: {}", f.info().name, f.message, files, f.fix())});
    recorder::stream_event(recorder::LibraryFindingEvent{f});
  }
}

// dlopen and dlclose calls so far, as the trampolines count them (ours included).
uint64_t dl_calls() {
  return recorder::g_events[static_cast<int>(recorder::Event::dlopen_calls)].load(std::memory_order_relaxed) +
         recorder::g_events[static_cast<int>(recorder::Event::dlclose_calls)].load(std::memory_order_relaxed);
}

}  // namespace

std::vector<LiveLine> libraries_rescan(const LiveDriverFacts& facts, bool final_read) {
  const bool force = final_read;
  // The driver bridge's files, outside the lock (BridgeFiles): once a re-read saw libcuda
  // loaded, and at the final one.
  std::optional<BridgeFiles> files;
  if (!g_bridge_done.load(std::memory_order_acquire) && (force || g_bridge_wanted.load(std::memory_order_acquire)))
    files = read_bridge_files();
  std::lock_guard<std::mutex> lock(g_mutex);
  State& s = state();
  const recorder::ModuleTotals totals = recorder::module_totals();
  const bool modules_changed = totals.count != s.modules_seen;
  // Walking the loaded objects holds the loader lock that fork() leaves locked in a child
  // (symbols/walk_objects.h): a tick walks them only when a dlopen or dlclose came since the
  // last walk, and once more on the tick after (a load may still be in progress at the first).
  const bool hinted = dl_calls() != s.dl_hint;
  if (!force && s.scanned && !hinted && s.quiet_walks >= 1 && !modules_changed && !files) return {};
  s.quiet_walks = hinted ? 0 : s.quiet_walks + 1;
  struct Rehint {  // after this re-read's own dlopen(RTLD_NOLOAD) probes, whichever way it returns
    State& s;
    ~Rehint() { s.dl_hint = dl_calls(); }
  } rehint{s};
  unsigned long long adds = 0, subs = 0;
  loader_counts(adds, subs);
  if (!force && s.scanned && adds == s.adds && subs == s.subs && !modules_changed && !files) return {};
  s.modules_seen = totals.count;
  const bool libs_changed = !s.scanned || adds != s.adds || subs != s.subs || force;
  s.adds = adds, s.subs = subs;
  if (libs_changed) reread_libraries(s);
  s.scanned = true;
  uint64_t dropped = 0;
  const std::vector<recorder::ModuleLoad> loads = recorder::module_loads(&dropped);
  if (facts.driver_version > 0) s.driver_version = facts.driver_version;
  std::vector<Finding> findings = library_findings(s.libs, facts.driver_version, totals, loads);
  bool driver_loaded = false;
  for (const auto& l : s.libs) driver_loaded = driver_loaded || l.family == "cuda";
  std::vector<LiveLine> lines;
  if (!s.bridge_done && driver_loaded) {
    if (files) {
      s.bridge = driver_bridge_live(s.libs, *files);
      s.bridge_done = true;
      g_bridge_done.store(true, std::memory_order_release);
      if (!files->problem.empty()) lines.push_back({Severity::warning, files->problem});
    } else {
      g_bridge_wanted.store(true, std::memory_order_release);  // read on the next re-read, before the lock
    }
  }
  if (!s.triton_done) {
    int sm = 0;
    for (const auto& m : loads) sm = m.sm ? m.sm : sm;
    const std::string triton = libs_changed || modules_changed ? loaded_triton_package() : "";
    if (!triton.empty() && sm > 0) s.triton = triton_live(triton, sm, driver_loaded), s.triton_done = true;
  }
  findings.insert(findings.end(), s.shortfalls.begin(), s.shortfalls.end());
  findings.insert(findings.end(), s.bridge.begin(), s.bridge.end());
  findings.insert(findings.end(), s.triton.begin(), s.triton.end());
  announce(s, findings, final_read, lines);
  s.findings = std::move(findings);
  return lines;
}

std::vector<LibraryEvent> library_events() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return state().events;
}

LibraryInventory library_inventory() {
  std::lock_guard<std::mutex> lock(g_mutex);
  const State& s = state();
  return {s.libs, s.findings, s.driver_version};
}

void library_inventory_reset() {
  new (&g_mutex) std::mutex;
  g_bridge_wanted.store(false), g_bridge_done.store(false);
  g_state = nullptr;  // the parent's state belongs to the parent (leaked in the child, once)
}

}  // namespace cudashim::policy
