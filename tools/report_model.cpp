// report_model.cpp: see report_model.h.
#include "tools/report_model.h"

#include <fmt/format.h>

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

FindingSite read_site(const Node& n) {
  FindingSite s;
  s.where = n.get<std::string>("where", "?");
  s.count = n.get<uint64_t>("count");
  s.blocked_ns = n.get<uint64_t>("blocked_ns");
  if (const Node wf = n["where_frame"]; !wf.is_null()) s.where_frame = read_frame(wf);
  if (!n["frames"].is_null()) {
    s.frames.emplace();
    for (const Node& fr : n.elements("frames"))
      s.frames->push_back(fr.is_null() ? std::nullopt : std::optional<RecordedFrame>(read_frame(fr)));
  }
  return s;
}

Finding read_finding(const Node& n) {
  Finding f;
  f.id = n.get<std::string>("id", "?");
  f.severity = n.get<std::string>("severity");
  f.fix = n.get<std::string>("fix");
  f.message = n.get<std::string>("message");
  f.count = n.get<uint64_t>("count");
  f.blocked_ns = n.get<uint64_t>("blocked_ns");
  for (const Node& s : n.elements("sites")) f.sites.push_back(read_site(s));
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

}  // namespace

ProcessReport read_process_report(Fields& fields) {
  const Node d = fields.root();
  ProcessReport r;
  const Node p = d["process"];
  r.pid = p.get<int64_t>("pid");
  r.rank = p.get_optional<int64_t>("rank");
  r.host = p.get<std::string>("host");
  r.exe = p.get<std::string>("exe", "?");
  const Node drv = d["driver"];
  r.libcuda_dlopen_requests = drv.get<int64_t>("libcuda_dlopen_requests");
  r.libcuda_loaded_null = drv.has("libcuda_loaded") && drv["libcuda_loaded"].is_null();
  (void)drv.get_optional<std::string>("libcuda_loaded");  // a string when not null
  for (const auto& [name, row] : d["api"].members())
    r.api.push_back({name, row.get<uint64_t>("calls"), row.get<uint64_t>("errors"), row.get<uint64_t>("last_error"),
                     row.get<uint64_t>("blocked_ns")});
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
  for (const Node& l : d.elements("libraries"))
    r.libraries.push_back({l.get<std::string>("family", "?"), l.get<std::string>("file", "?")});
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
  return e;
}

}  // namespace cudashim::tools
