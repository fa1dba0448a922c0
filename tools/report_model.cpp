// report_model.cpp: see report_model.h.
#include "tools/report_model.h"

#include <fmt/format.h>

#include <cstdlib>

namespace cudashim::tools {
namespace {

using Node = Fields::Node;

RecordedFrame read_frame(const Node& n) {
  RecordedFrame f;
  f.file = n.get_optional<std::string>("file");
  f.address = n.get_optional<uint64_t>("address");
  f.build_id = n.get<std::string>("build_id");
  f.size = n.get<uint64_t>("size");
  f.mtime_ns = n.get<int64_t>("mtime_ns");
  return f;
}

RecordedSite read_site(const Node& n) {
  RecordedSite s;
  s.where = n.get<std::string>("where", "?");
  s.api = n.get<std::string>("api");
  for (const Node& py : n.elements("python")) s.python.push_back(py.raw().is_string() ? py.raw().get<std::string>() : "?");
  s.count = n.get<uint64_t>("count");
  s.blocked_ns = n.get<uint64_t>("blocked_ns");
  s.sampled = n.get<bool>("sampled");
  s.gpu_idle_after_ns = n.get_optional<uint64_t>("gpu_idle_after_ns");
  if (const Node wf = n["where_frame"]; !wf.is_null()) s.where_frame = read_frame(wf);
  if (!n["frames"].is_null()) {
    s.frames.emplace();
    for (const Node& fr : n.elements("frames"))
      s.frames->push_back(fr.is_null() ? std::nullopt : std::optional<RecordedFrame>(read_frame(fr)));
  }
  return s;
}

// The part every finding list shares: the id (an old alias read as today's row; an id no row
// has kept as written, FindingId::none), the report's severity and fix, and its message.
// A severity other than info, warning or error leaves the row's (a warning for an unknown id).
Finding read_finding_head(const Node& n) {
  Finding f{};
  const std::string id = n.get<std::string>("id", "?");
  f.id = find_finding(id);
  f.recorded.id = f.id == FindingId::none ? id : finding_info(f.id).name;
  f.severity_override = severity_from_name(n.get<std::string>("severity"));
  f.exact_fix = n.get<std::string>("fix");
  f.message = n.get<std::string>("message");
  return f;
}

// findings[] and library_findings[].
Finding read_finding(const Node& n) {
  Finding f = read_finding_head(n);
  f.count = n.get<uint64_t>("count");
  f.blocked_ns = n.get<uint64_t>("blocked_ns");
  f.steps = n.get<uint64_t>("steps");
  f.recorded.gpu_idle_after_per_step_ns = n.get_optional<uint64_t>("gpu_idle_after_per_step_ns");
  f.recorded.predicted_saving_per_step_ns = n.get_optional<uint64_t>("predicted_saving_per_step_ns");
  f.recorded.step_ns = n.get_optional<uint64_t>("step_ns");
  for (const Node& a : n.elements("also")) f.recorded.also.push_back(a.raw().is_string() ? a.raw().get<std::string>() : "?");
  for (const Node& s : n.elements("sites")) f.recorded.sites.push_back(read_site(s));
  return f;
}

// gpu_time.findings[]: the device's, with its title and diagnosis as written.
Finding read_gpu_finding(const Node& n) {
  Finding f = read_finding_head(n);
  f.recorded.title = n.get<std::string>("title");
  f.recorded.diagnosis = n.get<std::string>("diagnosis");
  f.recorded.device = n.get<int64_t>("device");
  return f;
}

std::vector<DeviceMemory> read_devices(const Node& parent) {
  std::vector<DeviceMemory> out;
  for (const Node& d : parent.elements("devices"))
    out.push_back({d.get<int64_t>("device"), d.get<uint64_t>("live_bytes"), d.get<uint64_t>("peak_bytes")});
  return out;
}

TorchDevice read_torch_device(const Node& n) {
  TorchDevice t;
  t.device = n.get<int64_t>("device");
  t.allocated_bytes = n.get<uint64_t>("allocated_bytes");
  t.allocated_peak_bytes = n.get<uint64_t>("allocated_peak_bytes");
  t.reserved_bytes = n.get<uint64_t>("reserved_bytes");
  t.reserved_peak_bytes = n.get<uint64_t>("reserved_peak_bytes");
  t.process_bytes = n.get<uint64_t>("process_bytes");
  t.alloc_retries = n.get<uint64_t>("alloc_retries");
  t.outside_torch_bytes = n.get<int64_t>("outside_torch_bytes");
  t.fragmentation = n.get<double>("fragmentation");
  t.fragmented = n.get<bool>("fragmented");
  return t;
}

MemorySite read_memory_site(const Node& n) {
  return {n.get_optional<std::string>("where"), n.get_optional<std::string>("api"), n.get<std::string>("kind"),
          n.get<uint64_t>("count"), n.get<uint64_t>("bytes"), n.get<uint64_t>("oldest_age_ns")};
}

OomEvents read_oom(const Node& oom, const Node& ctx) {
  OomEvents o;
  o.count = oom.get<uint64_t>("count");
  o.denied_by_policy = oom.get<uint64_t>("denied_by_policy");
  if (ctx.is_null()) return o;
  o.has_context = true;
  o.api = ctx.get<std::string>("api", "?");
  o.reason = ctx.get<std::string>("reason", "?");
  o.device = ctx.get<int64_t>("device");
  o.requested_bytes = ctx.get<uint64_t>("requested_bytes");
  o.context_denied_by_policy = ctx.get<bool>("denied_by_policy");
  for (const Node& d : ctx.elements("devices"))
    o.devices.push_back({d.get<int64_t>("device"), d.get<uint64_t>("live_bytes"), d.get<uint64_t>("in_use_bytes"),
                         d.get<uint64_t>("cached_bytes"), d.get<uint64_t>("cap_bytes"),
                         d.get<uint64_t>("largest_block_bytes"), d.get<std::string>("largest_block_basis")});
  for (const Node& t : ctx.elements("top_sites")) o.top_sites.push_back(read_memory_site(t));
  return o;
}

PolicyInForce read_policy(const Node& n) {
  PolicyInForce p;
  if (n.is_null()) return p;
  p.present = true;
  p.mem_cap = n.get_optional<std::string>("mem_cap");
  p.cap_bytes_device0 = n.get<uint64_t>("cap_bytes_device0");
  p.managed = n.get<std::string>("managed");
  p.locked = n.get<bool>("locked");
  for (const auto& [name, where] : n["sources"].members()) p.sources.emplace_back(name, where.raw().is_string() ? where.raw().get<std::string>() : "?");
  for (const Node& a : n.elements("applied_env"))
    p.applied_env.push_back({a.get<std::string>("name", "?"), a.get<std::string>("value"), a.get<bool>("forced")});
  for (const Node& r : n.elements("refused"))
    p.refused.push_back({r.get<std::string>("setting", "?"), r.get<std::string>("value"), r.get<std::string>("from", "?"),
                         r.get<std::string>("why"), r.get<std::string>("kept")});
  return p;
}

PoolStats read_pool(const Node& n) {
  PoolStats p;
  p.enabled = n.get<bool>("enabled");
  p.max_cached_bytes = n.get<uint64_t>("max_cached_bytes");
  for (const Node& d : n.elements("devices"))
    p.devices.push_back({d.get<int64_t>("device"), d.get<uint64_t>("cached_bytes"), d.get<uint64_t>("peak_cached_bytes"),
                         d.get<uint64_t>("hits"), d.get<uint64_t>("misses"), d.get<uint64_t>("bypassed"),
                         d.get<uint64_t>("trims")});
  return p;
}

GpuTime read_gpu_time(const Node& n) {
  GpuTime g;
  g.mode = n["sampling"].get<std::string>("mode");
  g.reason = n["sampling"].get<std::string>("reason");
  auto idle = [](const Node& w) -> std::optional<double> {
    if (w.is_null() || !w.has("idle")) return std::nullopt;
    return w.get<double>("idle");
  };
  for (const Node& d : n.elements("devices")) {
    GpuTimeDevice dev{d.get<int64_t>("device"), idle(d["steady"]), idle(d["process_steady"]),
                      d["steady"].get<int64_t>("samples"), d.get<std::string>("diagnosis")};
    dev.idle_lower_bound = d.get<bool>("idle_lower_bound", false);
    dev.summary = d.get<std::string>("summary");
    if (d.has("idle_split") && !d["idle_split"].is_null()) {
      const Node& s = d["idle_split"];
      dev.split = GpuTimeDevice::Split{s.get<double>("idle"),          s.get<double>("after_syncs"),
                                       s.get<double>("host_between"),  s.get<double>("unexplained"),
                                       s.get<int64_t>("steps"),        s.get<int64_t>("step_ns"),
                                       s.get<double>("launches_per_step")};
    }
    if (n["precise"].get<std::string>("mode") == "cupti")
      for (const Node& p : n["precise"].elements("devices"))
        if (p.get<int64_t>("device") == dev.device && p["steady"].get<int64_t>("to_ns") > 0) dev.precise_steady_idle = idle(p["steady"]);
    g.devices.push_back(std::move(dev));
  }
  for (const Node& f : n.elements("findings"))
    g.findings.push_back(read_gpu_finding(f));
  return g;
}

}  // namespace

ProcessReport read_process_report(Fields& fields) {
  const Node d = fields.root();
  ProcessReport r;
  const Node p = d["process"];
  r.pid = p.get<int64_t>("pid");
  r.rank = p.get_optional<int64_t>("rank");
  r.host = p.get<std::string>("host");
  r.exe = p.get<std::string>("exe", "?");
  r.cudashim_version = d.get<std::string>("cudashim_version", "?");
  for (const Node& a : p.elements("argv")) r.argv.push_back(a.raw().is_string() ? a.raw().get<std::string>() : "?");
  r.start_unix_ns = p.get<uint64_t>("start_unix_ns");
  const Node drv = d["driver"];
  r.libcuda_dlopen_requests = drv.get<int64_t>("libcuda_dlopen_requests");
  r.libcuda_loaded_null = drv.has("libcuda_loaded") && drv["libcuda_loaded"].is_null();
  r.libcuda_loaded = drv.get_optional<std::string>("libcuda_loaded");
  r.driver_cuda_version = drv.get<int64_t>("cuda_version");
  r.kernel_module = drv.get_optional<std::string>("kernel_module");
  for (const Node& g : d.elements("devices"))
    r.gpus.push_back({g.get<int64_t>("device"), g.get<std::string>("name"), g.get<std::string>("compute_capability")});
  for (const Node& f : d.elements("frameworks"))
    r.frameworks.push_back({f.get<std::string>("name", "?"), f.get<std::string>("version"), f.get<std::string>("cuda")});
  for (const auto& [name, row] : d["api"].members())
    r.api.push_back({name, row.get<uint64_t>("calls"), row.get<uint64_t>("errors"), row.get<uint64_t>("last_error"),
                     row.get<uint64_t>("blocked_ns")});
  if (d.has("self_cost")) {
    const Node sc = d["self_cost"];
    r.self_cost = SelfCost{sc.get<uint64_t>("threads_cpu_ns"), sc.get<uint64_t>("hooks_ns_estimate"),
                           sc.get<uint64_t>("process_cpu_ns"), sc.get<double>("share_of_cpu_pct"),
                           sc.get<double>("share_of_wall_pct")};
    if (sc.has("steady")) r.self_cost->steady_share_of_wall_pct = sc["steady"].get<double>("share_of_wall_pct");
  }
  const Node blk = d["blocking"];
  r.wall_ns = blk.get<uint64_t>("wall_ns");
  r.blocked_ns = blk.get<uint64_t>("blocked_ns");
  for (const Node& f : d.elements("findings")) r.findings.push_back(read_finding(f));
  for (const Node& f : d.elements("library_findings")) r.library_findings.push_back(read_finding(f));
  r.devices = read_devices(d["memory"]);
  for (const Node& s : d["torch_memory"].elements("snapshots")) {
    TorchSnapshot snap{s.get<std::string>("moment", "?"), {}};
    for (const Node& t : s.elements("devices")) snap.devices.push_back(read_torch_device(t));
    r.torch.push_back(std::move(snap));
  }
  r.torch_state = d["torch_memory"].get<std::string>("state");
  for (const Node& l : d.elements("libraries"))
    r.libraries.push_back({l.get<std::string>("family", "?"), l.get<std::string>("file", "?"), l.get<std::string>("path"),
                           l.get<std::string>("version"), l.get<std::string>("linkage"), l.get<std::string>("how"),
                           l.get<std::string>("loaded_by"), l.get<std::string>("requested"),
                           l.get<std::string>("reason")});
  r.oom = read_oom(d["oom"], d["oom_context"]);
  const Node leaks = d["leaks"];
  r.leaked_allocations = leaks.get<uint64_t>("live_allocations");
  r.leaked_bytes = leaks.get<uint64_t>("live_bytes");
  for (const Node& l : leaks.elements("by_site")) r.leaks.push_back(read_memory_site(l));
  r.policy = read_policy(d["policy"]);
  r.pool = read_pool(d["pool"]);
  r.gpu_time = read_gpu_time(d["gpu_time"]);
  return r;
}

CrashRecord read_crash_record(Fields& fields) {
  const Node d = fields.root();
  CrashRecord c;
  c.pid = d.get<int64_t>("pid");
  c.reason = d.get<std::string>("reason");
  c.signal_name = d.get<std::string>("signal_name", "signal");
  c.fault_address = d.get<std::string>("fault_address", "?");
  c.api = d.get<std::string>("api", "?");
  c.result = d.get<uint64_t>("result");
  for (const Node& t : d.elements("threads")) {
    CrashThread th{t.get<int64_t>("tid"), t.get<int64_t>("calls"), {}};
    for (const Node& call : t.elements("last_calls"))
      th.last_calls.push_back({call.get<std::string>("api", "?"), call.get<int64_t>("result")});
    c.threads.push_back(std::move(th));
  }
  // Addresses are hex strings, as fault_address is; one that is no hex number reads as 0.
  const auto hex = [](const Node& n, std::string_view key) {
    const std::string text = n.get<std::string>(key, "0x0");
    return text.rfind("0x", 0) == 0 ? std::strtoull(text.c_str() + 2, nullptr, 16) : 0ull;
  };
  const Node bt = d["backtrace"];
  c.backtrace_source = bt.get<std::string>("source");
  for (const Node& f : bt.elements("frames"))
    c.backtrace.push_back({hex(f, "address"), f.get<bool>("pc"), f.get<int64_t>("module"), f.get<uint64_t>("file_offset"), {}});
  for (const Node& m : bt.elements("modules"))
    c.modules.push_back({m.get<std::string>("path"), hex(m, "base"), m.get<uint64_t>("size"), m.get<int64_t>("mtime_ns")});
  return c;
}

StreamEvent read_stream_event(Fields& fields) {
  const Node ev = fields.root();
  StreamEvent e;
  e.type = ev.get<std::string>("type");
  e.t_ns = ev.get_optional<uint64_t>("t_ns");
  if (e.type == "start") e.pid = ev.get<int64_t>("pid");
  if (e.type == "finding") e.id = ev.get<std::string>("id", "?");
  if (e.type == "signal") {
    // The shim writes both; a line with the number alone (an older or edited stream) is named from it.
    e.signal = ev.get<std::string>("name", "");
    if (e.signal.empty()) {
      const int64_t n = ev.get<int64_t>("signal", 0);
      e.signal = n == 1 ? "SIGHUP" : n == 2 ? "SIGINT" : n == 6 ? "SIGABRT" : n == 15 ? "SIGTERM" : fmt::format("signal {}", n);
    }
  }
  if (e.type == "snapshot" || e.type == "exit")
    e.counters = StreamCounters{ev.get<uint64_t>("t_ns"), ev.get<uint64_t>("calls"), ev.get<uint64_t>("errors"),
                                ev.get<uint64_t>("blocked_ns"), read_devices(ev)};
  if (e.type == "gpu_health")
    e.health = GpuHealthPoint{ev.get<uint64_t>("t_ns"),
                              ev.get<int64_t>("device"),
                              ev.get_optional<uint64_t>("sm_mhz"),
                              ev.get_optional<uint64_t>("mem_mhz"),
                              ev.get_optional<uint64_t>("clock_event_reasons"),
                              ev.get_optional<uint64_t>("temp_c"),
                              ev.get_optional<uint64_t>("power_mw"),
                              ev.get_optional<uint64_t>("power_limit_mw"),
                              ev.get_optional<uint64_t>("mem_used_bytes")};
  return e;
}

}  // namespace cudashim::tools
