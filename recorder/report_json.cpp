// report_json.cpp: the per-process JSON report, schema "cudashim.report/1".
// The schema is documented in docs/report-schema.md; tests validate against it.
#include <fmt/format.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "recorder/clock.h"
#include "recorder/events.h"
#include "recorder/torch_memory.h"
#include "recorder/oom.h"
#include "recorder/recorder.h"
#include "symbols/walk_objects.h"

namespace cudashim::recorder {

constinit std::atomic<uint64_t> g_events[kEventCount]{};

const char* event_name(Event e) {
  static constexpr const char* kNames[] = {
#define CUDASHIM_EVENT_NAME(name, doc) #name,
      CUDASHIM_EVENTS(CUDASHIM_EVENT_NAME)
#undef CUDASHIM_EVENT_NAME
  };
  return kNames[static_cast<int>(e)];
}

const char* event_doc(Event e) {
  static constexpr const char* kDocs[] = {
#define CUDASHIM_EVENT_DOC(name, doc) doc,
      CUDASHIM_EVENTS(CUDASHIM_EVENT_DOC)
#undef CUDASHIM_EVENT_DOC
  };
  return kDocs[static_cast<int>(e)];
}

namespace {

// Appends `s` as a JSON string literal.
void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20)
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        else
          out += static_cast<char>(c);
    }
  }
  out += '"';
}

// Appends formatted text to `out`.
template <typename... A>
void app(std::string& out, fmt::format_string<A...> f, A&&... a) {
  fmt::format_to(std::back_inserter(out), f, std::forward<A>(a)...);
}

// Returns the path of the first loaded libcuda.so*, or "" when none is loaded.
std::string loaded_libcuda() {
  std::string found;
  symbols::walk_objects(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        const char* name = info->dlpi_name;
        if (name == nullptr) return 0;
        const char* base = std::strrchr(name, '/');
        base = base ? base + 1 : name;
        if (std::strncmp(base, "libcuda.so", 10) != 0) return 0;
        *static_cast<std::string*>(data) = name;
        return 1;
      },
      &found);
  return found;
}

std::string read_cmdline() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

int rank_from_env() {
  for (const char* var : {"RANK", "SLURM_PROCID", "LOCAL_RANK"}) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long r = std::strtol(v, &end, 10);
    if (*end == '\0' && r >= 0 && r < (1 << 24)) return static_cast<int>(r);
  }
  return -1;
}

}  // namespace

void capture_process_info(ProcessInfo& info) {
  info.pid = getpid();
  info.ppid = getppid();
  info.rank = rank_from_env();
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) info.host = host;
  char exe[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) info.exe.assign(exe, static_cast<size_t>(n));
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  info.start_unix_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  info.start_mono_ns = monotonic_ns();
}

bool has_activity() {
  for (size_t h = 0; h < kHookCount; ++h)
    if (calls_of(h) != 0) return true;
  return g_events[static_cast<int>(Event::libcuda_dlopen_requests)].load(std::memory_order_relaxed) != 0;
}

void reset_all() {
  reset_slots();
  ledger_reset();
  oom_reset();
  torch_mem_reset();
  for (auto& e : g_events) e.store(0, std::memory_order_relaxed);
}

std::string render_report_json(const ProcessInfo& info, const std::string& extra_sections) {
  // Per call, not static: cudashim_write_report() may run beside the exit path.
  auto totals = std::make_unique<CounterTotals>();
  CounterTotals& t = *totals;
  sum_slots(t);
  std::string out;
  out.reserve(16384);

  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const uint64_t end_unix = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  const uint64_t wall = monotonic_ns() - info.start_mono_ns;

  app(out, "{{\n  \"schema\": \"cudashim.report/1\",\n  \"cudashim_version\": \"{}\",\n", CUDASHIM_VERSION);
  app(out, "  \"process\": {{\"pid\": {}, \"ppid\": {}, \"rank\": ", info.pid, info.ppid);
  if (info.rank >= 0) app(out, "{}", info.rank); else out += "null";
  out += ", \"host\": ";
  json_string(out, info.host);
  out += ", \"exe\": ";
  json_string(out, info.exe);
  out += ", \"argv\": [";
  const std::string cmd = read_cmdline();
  bool first = true;
  for (size_t pos = 0; pos < cmd.size();) {
    const size_t end = cmd.find('\0', pos);
    const std::string_view arg(cmd.data() + pos, (end == std::string::npos ? cmd.size() : end) - pos);
    if (!first) out += ", ";
    json_string(out, arg);
    first = false;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  app(out, "], \"start_unix_ns\": {}, \"end_unix_ns\": {}, \"wall_ns\": {}, \"threads\": {}}},\n", info.start_unix_ns,
      end_unix, wall, t.threads);

  // api: one entry per hooked ABI symbol that was called.
  out += "  \"api\": {";
  first = true;
  for (size_t h = 0; h < kHookCount; ++h) {
    if (t.calls[h] == 0) continue;
    const HookInfo& hi = kHooks[h];
    app(out, "{}\n    \"{}\": {{\"family\": \"{}\", \"layer\": \"{}\", \"calls\": {}, \"errors\": {}", first ? "" : ",", hi.name,
        family_name(hi.family), hi.layer(), t.calls[h], t.errors[h]);
    if (t.last_error[h] != 0) app(out, ", \"last_error\": {}", t.last_error[h]);
    if (hi.timing == Timing::BLOCKING) app(out, ", \"blocked_ns\": {}", ticks_to_ns(t.time_ns[h]));
    if (hi.timing == Timing::TIMED) app(out, ", \"time_ns\": {}", ticks_to_ns(t.time_ns[h]));
    if (hi.kind == RecKind::COPY) app(out, ", \"bytes\": {}", t.bytes[h]);
    out += "}";
    first = false;
  }
  out += first ? "},\n" : "\n  },\n";

  // driver: is a libcuda loaded at all (on a machine without a driver, a program's
  // dlopen("libcuda.so.1") fails before any hooked call).
  const std::string libcuda = loaded_libcuda();
  app(out, "  \"driver\": {{\"libcuda_dlopen_requests\": {}, \"libcuda_loaded\": ",
      g_events[static_cast<int>(Event::libcuda_dlopen_requests)].load(std::memory_order_relaxed));
  if (libcuda.empty()) out += "null"; else json_string(out, libcuda);
  out += "},\n";

  app(out, "  \"blocking\": {{\"blocked_ns\": {}, \"wall_ns\": {}, \"clock\": \"{}\"}},\n",
      ticks_to_ns(t.blocked_outer_ns), wall, g_clock_uses_tsc ? "tsc" : "monotonic");

  // memory: the ledger, per device (host memory under device "host").
  DeviceStats devs[kMaxDevices + 1];
  const int n = ledger_devices(devs, kMaxDevices + 1);
  out += "  \"memory\": {\"devices\": [";
  bool first_dev = true;
  std::string host_json;
  for (int i = 0; i < n; ++i) {
    const DeviceStats& d = devs[i];
    std::string row;
    if (d.device == kHostDevice)
      row += "{\"kinds\": {";
    else
      app(row, "{{\"device\": {}, \"live_bytes\": {}, \"peak_bytes\": {}, \"kinds\": {{", d.device, d.live_bytes, d.peak_bytes);
    bool first_kind = true;
    for (int k = 0; k < kMemKinds; ++k) {
      const KindStats& ks = d.kinds[k];
      if (ks.allocs == 0 && ks.frees == 0) continue;
      app(row, "{}\"{}\": {{\"live_bytes\": {}, \"peak_bytes\": {}, \"allocs\": {}, \"frees\": {}, \"live_allocations\": {}}}",
           first_kind ? "" : ", ", mem_kind_name(static_cast<MemKind>(k)), ks.live_bytes, ks.peak_bytes, ks.allocs,
           ks.frees, ks.live_count);
      first_kind = false;
    }
    row += "}}";
    if (d.device == kHostDevice) {
      host_json = row;
    } else {
      app(out, "{}\n      {}", first_dev ? "" : ",", row);
      first_dev = false;
    }
  }
  out += first_dev ? "]" : "\n    ]";
  app(out, ", \"host\": {}, \"ledger_overflows\": {}, \"unknown_frees\": {}}},\n", host_json.empty() ? "null" : host_json,
      ledger_overflows(), ledger_unknown_frees());

  // oom: out-of-memory events, real or denied by the policy, with the last one's context.
  const OomSummary oom = oom_summary();
  app(out, "  \"oom\": {{\"count\": {}, \"denied_by_policy\": {}, \"last\": ", oom.count, oom.denied);
  if (oom.count == 0) {
    out += "null";
  } else {
    app(out, "{{\"api\": \"{}\", \"device\": {}, \"requested_bytes\": {}, \"in_use_bytes\": {}, \"cap_bytes\": {}, "
        "\"denied_by_policy\": {}, \"reason\": \"{}\"}}",
        hook_info(oom.last.api).name, oom.last.device, oom.last.requested, oom.last.capped_bytes, oom.last.cap,
        oom.last.denied_by_policy ? "true" : "false", oom.last.reason ? oom.last.reason : "");
  }
  out += "},\n";
  out += extra_sections;

  out += "  \"interposition\": {";
  for (int e = 0; e < kEventCount; ++e)
    app(out, "{}\"{}\": {}", e ? ", " : "", event_name(static_cast<Event>(e)),
        g_events[e].load(std::memory_order_relaxed));
  out += "}\n}\n";
  return out;
}

}  // namespace cudashim::recorder
