// fleet_exporter.cpp: `cudashim exporter` (tools/fleet_exporter.h).
//
// One thread: poll(2) over the listening socket and at most kMaxClients connections; each
// GET /metrics reads the runtime folder afresh (64 records are 64 small reads) and answers
// with Connection: close. Every record is read as hostile (read_fleet_record); a bad one is
// said once on stderr per version of the file and skipped, never served.
#include "tools/fleet_exporter.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <iostream>

namespace cudashim::tools {
namespace {

constexpr size_t kMaxClients = 64;
constexpr size_t kMaxFinished = 512;  // finished jobs kept in the textfile
volatile sig_atomic_t g_stop = 0;

std::string read_small(const std::string& path, size_t max) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  std::string s(max, '\0');
  const ssize_t n = read(fd, s.data(), max);
  close(fd);
  s.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return s;
}

template <size_t N>
bool terminated(const char (&s)[N]) {
  return std::memchr(s, '\0', N) != nullptr;
}

// Field 22 of /proc/<pid>/stat and its owner, or false when the process is gone.
bool process_start(int pid, uint64_t& start, uint32_t& uid) {
  const std::string dir = fmt::format("/proc/{}", pid);
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) return false;
  uid = st.st_uid;
  const std::string text = read_small(dir + "/stat", 1024);
  const size_t p = text.rfind(')');
  if (p == std::string::npos) return false;
  const char* c = text.c_str() + p;
  for (int field = 2; field < 22 && c != nullptr; ++field) c = std::strchr(c + 1, ' ');
  if (c == nullptr) return false;
  start = std::strtoull(c + 1, nullptr, 10);
  return true;
}

// A record written inside a container names the process by its pid there; with hostPID the
// exporter sees the host's. The host pid of the process that started at `start` and whose
// innermost pid (the last of /proc/<pid>/status's NSpid) is `ns_pid`, or 0.
int host_pid_of(int ns_pid, uint64_t start) {
  DIR* d = opendir("/proc");
  if (d == nullptr) return 0;
  int found = 0;
  while (const dirent* e = readdir(d)) {
    const int pid = std::atoi(e->d_name);
    uint64_t s = 0;
    uint32_t uid = 0;
    if (pid <= 0 || pid == ns_pid || !process_start(pid, s, uid) || s != start) continue;
    const std::string status = read_small(fmt::format("/proc/{}/status", pid), 4096);
    const size_t at = status.find("\nNSpid:");
    if (at == std::string::npos) continue;
    const std::string line = status.substr(at + 8, status.find('\n', at + 8) - at - 8);
    const size_t last = line.find_last_of(" \t");
    if (std::atoi(line.c_str() + (last == std::string::npos ? 0 : last + 1)) == ns_pid) {
      found = pid;
      break;
    }
  }
  closedir(d);
  return found;
}

// The values of `r` that no process could have: the reason, or "".
std::string absurd_values(const FleetRecord& r) {
  if (r.state != static_cast<uint32_t>(FleetState::running) && r.state != static_cast<uint32_t>(FleetState::exited))
    return fmt::format("state {} is neither running (1) nor exited (2)", r.state);
  if (r.pid <= 0) return fmt::format("pid {}", r.pid);
  if (r.device_count > kFleetMaxDevices) return fmt::format("{} devices (at most {})", r.device_count, kFleetMaxDevices);
  if (r.finding_count > kFleetMaxFindings) return fmt::format("{} findings (at most {})", r.finding_count, kFleetMaxFindings);
  for (size_t i = 0; i < kFleetValueCount; ++i)
    if (r.values[i] >= kFleetAbsurd) return fmt::format("{} = {}", kFleetValues[i].metric, r.values[i]);
  if (!terminated(r.exe) || !terminated(r.slurm_job_id) || !terminated(r.slurm_step) || !terminated(r.pod) ||
      !terminated(r.pod_namespace) || !terminated(r.container) || !terminated(r.pod_uid))
    return "a label is not NUL-terminated";
  for (uint32_t d = 0; d < r.device_count; ++d) {
    const FleetDevice& dev = r.devices[d];
    if (!terminated(dev.pci_bus_id) || !terminated(dev.name) || !terminated(dev.diagnosis))
      return "a device label is not NUL-terminated";
    for (size_t i = 0; i < kFleetDeviceValueCount; ++i)
      if (dev.values[i] >= kFleetAbsurd) return fmt::format("{} = {}", kFleetDeviceValues[i].metric, dev.values[i]);
    const uint64_t busy = dev.values[static_cast<size_t>(FleetDeviceValue::busy_ppm)];
    const uint64_t idle = dev.values[static_cast<size_t>(FleetDeviceValue::idle_ppm)];
    if (dev.has_share > 1 || (dev.has_share && busy + idle != 1000000))
      return fmt::format("device {}: busy share {} and idle share {} (ppm) do not add up to 1", dev.ordinal, busy, idle);
  }
  for (uint32_t f = 0; f < r.finding_count; ++f) {
    const FleetFinding& x = r.findings[f];
    if (!terminated(x.id) || !terminated(x.severity)) return "a finding's id is not NUL-terminated";
    if (x.count >= kFleetAbsurd || x.blocked_ns >= kFleetAbsurd) return fmt::format("finding {}: absurd cost", x.id);
  }
  return {};
}

// Prometheus label values: UTF-8 with \\, \" and \n escaped; bytes outside printable ASCII
// (a record's labels are the process's own words) become '?'.
std::string label(const char* s) {
  std::string o;
  for (const char* p = s; *p; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '\\' || c == '"') o += '\\', o += static_cast<char>(c);
    else if (c < 0x20 || c > 0x7e) o += '?';
    else o += static_cast<char>(c);
  }
  return o;
}

std::string number(uint64_t v, double scale) {
  if (scale == 1) return std::to_string(v);
  return fmt::format("{}", static_cast<double>(v) / scale);
}

}  // namespace

bool read_fleet_record(int dirfd, const std::string& name, FleetRecord& out, std::string& why) {
  const int fd = openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    why = errno == ELOOP ? "a symbolic link, not a record" : fmt::format("cannot open: {}", std::strerror(errno));
    return false;
  }
  struct stat st {};
  alignas(8) char buf[sizeof(FleetRecord) + 1];
  ssize_t n = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    n = 0;
    for (ssize_t r; static_cast<size_t>(n) < sizeof buf && (r = read(fd, buf + n, sizeof buf - static_cast<size_t>(n))) > 0;) n += r;
  }
  close(fd);
  if (n < 0) {
    why = "not a regular file";
    return false;
  }
  if (n < 16 || std::memcmp(buf, kFleetMagic, sizeof kFleetMagic) != 0) {
    why = n < 16 ? fmt::format("truncated ({} bytes)", n) : "not a cudashim fleet record (wrong magic)";
    return false;
  }
  uint32_t version = 0;
  std::memcpy(&version, buf + 8, sizeof version);
  if (version != kFleetVersion) {
    why = fmt::format("record version {} written by a {} cudashim; this exporter reads version {}", version,
                      version > kFleetVersion ? "newer" : "older", kFleetVersion);
    return false;
  }
  if (static_cast<size_t>(n) != sizeof(FleetRecord)) {
    why = fmt::format("{} ({} bytes, a record is {})", static_cast<size_t>(n) < sizeof(FleetRecord) ? "truncated" : "too long", n,
                      sizeof(FleetRecord));
    return false;
  }
  std::memcpy(&out, buf, sizeof out);
  if (out.size != sizeof(FleetRecord) || out.checksum != fleet_checksum(out)) {
    why = "checksum mismatch (cut, edited or not written by cudashim)";
    return false;
  }
  if (st.st_uid != out.uid) {
    why = fmt::format("owned by uid {} but written for uid {}", st.st_uid, out.uid);
    return false;
  }
  if (const std::string a = absurd_values(out); !a.empty()) {
    why = "absurd values: " + a;
    return false;
  }
  if (name != fmt::format("{}-{}.rec", out.pid, out.start_ticks)) {
    why = fmt::format("its name does not match its pid {} and start {}", out.pid, out.start_ticks);
    return false;
  }
  return true;
}

std::map<std::string, GpuIdentity> read_gpu_identities(const std::string& nvidia_gpus) {
  std::map<std::string, GpuIdentity> gpus;
  DIR* d = opendir(nvidia_gpus.c_str());
  if (d == nullptr) return gpus;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string info = read_small(nvidia_gpus + "/" + e->d_name + "/information", 8192);
    GpuIdentity g;
    for (size_t pos = 0; pos < info.size();) {
      const size_t eol = std::min(info.find('\n', pos), info.size());
      const std::string line = info.substr(pos, eol - pos);
      pos = eol + 1;
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      if (line.rfind("GPU UUID", 0) == 0) g.uuid = value;
      if (line.rfind("Device Minor", 0) == 0) g.index = value;
    }
    std::string bus = e->d_name;
    std::transform(bus.begin(), bus.end(), bus.begin(), [](unsigned char c) { return std::tolower(c); });
    gpus[bus] = g;
  }
  closedir(d);
  return gpus;
}

namespace {

std::string process_labels(const FleetRecord& r, const std::string& host) {
  return fmt::format(
      "pid=\"{}\",exe=\"{}\",rank=\"{}\",slurm_job_id=\"{}\",slurm_step=\"{}\",pod=\"{}\",namespace=\"{}\","
      "container=\"{}\",Hostname=\"{}\"",
      r.pid, label(r.exe), r.rank >= 0 ? std::to_string(r.rank) : std::string(), label(r.slurm_job_id),
      label(r.slurm_step), label(r.pod), label(r.pod_namespace), label(r.container), label(host.c_str()));
}

// dcgm-exporter's labels of a GPU: gpu (NVML's index), UUID, pci_bus_id, modelName; where the
// driver's /proc files are not there (a test double), gpu is the CUDA ordinal and UUID "".
std::string device_labels(const FleetDevice& d, const std::map<std::string, GpuIdentity>& gpus) {
  std::string bus = d.pci_bus_id;
  std::transform(bus.begin(), bus.end(), bus.begin(), [](unsigned char c) { return std::tolower(c); });
  auto it = gpus.find(bus);
  if (it == gpus.end() && bus.size() > 12) it = gpus.find(bus.substr(bus.size() - 12));  // 00000000:18:00.0
  const std::string gpu = it != gpus.end() && !it->second.index.empty() ? it->second.index : std::to_string(d.ordinal);
  return fmt::format("gpu=\"{}\",UUID=\"{}\",pci_bus_id=\"{}\",modelName=\"{}\",cuda_device=\"{}\"", gpu,
                     it != gpus.end() ? label(it->second.uuid.c_str()) : std::string(), label(d.pci_bus_id),
                     label(d.name), d.ordinal);
}

void header(std::string& out, const std::string& name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

std::string render_fleet_metrics(const std::vector<ServedRecord>& records, const std::map<std::string, GpuIdentity>& gpus,
                                 const std::string& hostname, const std::string& prefix) {
  auto name_of = [&](const char* metric) { return prefix + (metric + std::strlen("cudashim_")); };
  std::vector<std::string> labels;
  for (const auto& s : records) labels.push_back(process_labels(s.rec, hostname));
  std::string out;
  const std::string running = name_of("cudashim_process_running");
  header(out, running, "gauge", "1 while the process runs, 0 once it ended (served until reaped).");
  for (size_t i = 0; i < records.size(); ++i)
    out += fmt::format("{}{{{}}} {}\n", running, labels[i],
                       records[i].alive && records[i].rec.state == static_cast<uint32_t>(FleetState::running) ? 1 : 0);
  for (size_t v = 0; v < kFleetValueCount; ++v) {
    const FleetMetric& m = kFleetValues[v];
    header(out, name_of(m.metric), m.counter ? "counter" : "gauge", m.help);
    for (size_t i = 0; i < records.size(); ++i)
      out += fmt::format("{}{{{}}} {}\n", name_of(m.metric), labels[i], number(records[i].rec.values[v], m.scale));
  }
  for (size_t v = 0; v < kFleetDeviceValueCount; ++v) {
    const FleetMetric& m = kFleetDeviceValues[v];
    const bool share = v == static_cast<size_t>(FleetDeviceValue::busy_ppm) || v == static_cast<size_t>(FleetDeviceValue::idle_ppm);
    header(out, name_of(m.metric), m.counter ? "counter" : "gauge", m.help);
    for (size_t i = 0; i < records.size(); ++i)
      for (uint32_t d = 0; d < records[i].rec.device_count; ++d) {
        const FleetDevice& dev = records[i].rec.devices[d];
        if (share && !dev.has_share) continue;
        out += fmt::format("{}{{{},{}{}}} {}\n", name_of(m.metric), labels[i], device_labels(dev, gpus),
                           share ? fmt::format(",diagnosis=\"{}\"", label(dev.diagnosis)) : std::string(),
                           number(dev.values[v], m.scale));
      }
  }
  const std::string calls = name_of("cudashim_finding_calls"), blocked = name_of("cudashim_finding_blocked_seconds");
  header(out, calls, "gauge", "Calls a finding of the process counted so far (0 for a process-wide finding).");
  std::string blocked_lines;
  for (size_t i = 0; i < records.size(); ++i)
    for (uint32_t f = 0; f < records[i].rec.finding_count; ++f) {
      const FleetFinding& x = records[i].rec.findings[f];
      const std::string l = fmt::format("{},finding=\"{}\",severity=\"{}\"", labels[i], label(x.id), label(x.severity));
      out += fmt::format("{}{{{}}} {}\n", calls, l, x.count);
      blocked_lines += fmt::format("{}{{{}}} {}\n", blocked, l, number(x.blocked_ns, 1e9));
    }
  header(out, blocked, "gauge", "Seconds the process blocked in the calls of a finding so far: what fixing it saves.");
  out += blocked_lines;
  return out;
}

namespace {

// The exporter's state between scrapes.
struct Exporter {
  const ExporterOptions& o;
  std::string hostname;
  std::map<std::string, std::string> said;          // file -> the reason it was skipped (said once while it stays)
  std::map<std::string, time_t> finished_since;     // file -> when its process was first seen ended
  std::deque<ServedRecord> finished;                // reaped, for the textfile
  std::map<std::string, int> host_pids;             // file -> the host pid of a container's process (0: none)
  uint64_t scrapes = 0, skipped = 0;
};

void write_textfile(Exporter& e) {
  if (e.o.textfile.empty()) return;
  const std::vector<ServedRecord> jobs(e.finished.begin(), e.finished.end());
  const std::string body = render_fleet_metrics(jobs, {}, e.hostname, "cudashim_job_");
  const std::string path = e.o.textfile + "/cudashim.prom", tmp = e.o.textfile + "/.cudashim.prom.tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  const bool ok = fd >= 0 && write(fd, body.data(), body.size()) == static_cast<ssize_t>(body.size());
  if (fd >= 0) close(fd);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0)
    fmt::print(stderr, "cudashim exporter: cannot write the textfile {}: {}\n", path, std::strerror(errno));
}

// Reads the folder: the records to serve; reaps those whose process ended keep_exited_s ago.
std::vector<ServedRecord> scan(Exporter& e) {
  std::vector<ServedRecord> out;
  const int dirfd = open(e.o.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) return out;
  DIR* d = fdopendir(dirfd);
  if (d == nullptr) {
    close(dirfd);
    return out;
  }
  const time_t now = time(nullptr);
  bool reaped = false;
  std::map<std::string, time_t> still_finished;
  std::map<std::string, std::string> said_before;  // only the files still there are remembered
  said_before.swap(e.said);
  std::map<std::string, int> host_pids;
  host_pids.swap(e.host_pids);
  e.skipped = 0;
  while (const dirent* ent = readdir(d)) {
    const std::string name = ent->d_name;
    if (name[0] == '.' || name.size() < 5 || name.substr(name.size() - 4) != ".rec") continue;
    ServedRecord s;
    std::string why;
    if (!read_fleet_record(dirfd, name, s.rec, why)) {
      ++e.skipped;
      if (said_before[name] != why) fmt::print(stderr, "cudashim exporter: skipped {}/{}: {}\n", e.o.dir, name, why);
      e.said[name] = why;
      continue;
    }
    uint64_t start = 0;
    uint32_t uid = 0;
    bool exists = process_start(s.rec.pid, start, uid) && start == s.rec.start_ticks;
    if (!exists) {  // in another pid namespace (a container)? its host pid, found once
      auto hp = host_pids.find(name);
      const int host = hp != host_pids.end() ? hp->second : host_pid_of(s.rec.pid, s.rec.start_ticks);
      e.host_pids[name] = host;
      exists = host > 0 && process_start(host, start, uid) && start == s.rec.start_ticks;
    }
    if (exists && uid != s.rec.uid) {
      ++e.skipped;
      why = fmt::format("pid {} belongs to uid {}, not to the record's uid {}", s.rec.pid, uid, s.rec.uid);
      if (said_before[name] != why) fmt::print(stderr, "cudashim exporter: skipped {}/{}: {}\n", e.o.dir, name, why);
      e.said[name] = why;
      continue;
    }
    s.alive = exists;
    if (!exists || s.rec.state == static_cast<uint32_t>(FleetState::exited)) {
      auto it = e.finished_since.find(name);
      const time_t since = it == e.finished_since.end() ? now : it->second;
      if (!exists && now - since >= e.o.keep_exited_s) {
        if (unlinkat(dirfd, name.c_str(), 0) == 0 || errno == ENOENT) {
          e.finished.push_back(s);
          if (e.finished.size() > kMaxFinished) e.finished.pop_front();
          reaped = true;
        }
        continue;
      }
      still_finished[name] = since;
    }
    out.push_back(s);
  }
  closedir(d);
  e.finished_since.swap(still_finished);
  if (reaped) write_textfile(e);
  return out;
}

std::string metrics(Exporter& e) {
  const std::vector<ServedRecord> records = scan(e);
  std::string body = render_fleet_metrics(records, read_gpu_identities(e.o.nvidia_gpus), e.hostname);
  body += "# HELP cudashim_exporter_records Fleet records served in this scrape.\n# TYPE cudashim_exporter_records gauge\n";
  body += fmt::format("cudashim_exporter_records {}\n", records.size());
  body += "# HELP cudashim_exporter_skipped_records Files of the runtime folder skipped as bad in this scrape (each said once on stderr).\n"
          "# TYPE cudashim_exporter_skipped_records gauge\n";
  body += fmt::format("cudashim_exporter_skipped_records {}\n", e.skipped);
  body += "# HELP cudashim_exporter_scrapes_total Scrapes answered.\n# TYPE cudashim_exporter_scrapes_total counter\n";
  body += fmt::format("cudashim_exporter_scrapes_total {}\n", ++e.scrapes);
  return body;
}

struct Client {
  int fd;
  std::string in;
  time_t since;
};

// Answers one request read in full; the connection is closed after it.
void answer(Exporter& e, Client& c) {
  std::string status = "200 OK", body, type = "text/plain; version=0.0.4; charset=utf-8";
  if (c.in.rfind("GET /metrics", 0) == 0 || c.in.rfind("GET /metrics?", 0) == 0) {
    body = metrics(e);
  } else if (c.in.rfind("GET / ", 0) == 0) {
    body = "cudashim exporter: the fleet's metrics are at /metrics\n";
  } else {
    status = "404 Not Found", body = "not found: cudashim exporter serves /metrics\n";
  }
  const std::string reply = fmt::format("HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                                        status, type, body.size(), body);
  size_t done = 0;
  while (done < reply.size()) {
    const ssize_t w = send(c.fd, reply.data() + done, reply.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
}

int listen_on(const ExporterOptions& o) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(o.port));
  if (inet_pton(AF_INET, o.listen.c_str(), &a.sin_addr) != 1) {
    fmt::print(stderr, "cudashim exporter: --listen '{}' is not an IPv4 address\n", o.listen);
    return -1;
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 64) != 0) {
    fmt::print(stderr, "cudashim exporter: cannot listen on {}:{}: {}\n", o.listen, o.port, std::strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  fmt::print(stderr, "cudashim exporter: serving {} on http://{}:{}/metrics\n", o.dir, o.listen, ntohs(a.sin_port));
  return fd;
}

void serve(Exporter& e, int lfd) {
  std::vector<Client> clients;
  while (!g_stop) {
    std::vector<pollfd> p{{lfd, POLLIN, 0}};
    for (const Client& c : clients) p.push_back({c.fd, POLLIN, 0});
    if (poll(p.data(), p.size(), 1000) < 0 && errno != EINTR) break;
    const time_t now = time(nullptr);
    for (size_t i = clients.size(); i-- > 0;) {
      Client& c = clients[i];
      bool done = now - c.since > 5;  // a client that sends no request in 5 s is dropped
      if (p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[4096];
        const ssize_t n = recv(c.fd, buf, sizeof buf, 0);
        if (n <= 0) done = true;
        else c.in.append(buf, static_cast<size_t>(n));
        if (c.in.find("\r\n\r\n") != std::string::npos || c.in.find("\n\n") != std::string::npos) answer(e, c), done = true;
        else if (c.in.size() > 16384) done = true;
      }
      if (done) close(c.fd), clients.erase(clients.begin() + static_cast<long>(i));
    }
    if ((p[0].revents & POLLIN) != 0) {
      const int c = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c >= 0 && clients.size() < kMaxClients) clients.push_back({c, {}, now});
      else if (c >= 0) close(c);
    }
  }
  for (const Client& c : clients) close(c.fd);
}

// fleet.dir's auto, as the preload library resolves it (shim/fleet_publish.cpp).
std::string default_dir() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/cudashim";
  return "/run/cudashim";
}

void on_stop(int) { g_stop = 1; }

}  // namespace

int run_exporter(const ExporterOptions& options) {
  ExporterOptions o = options;
  if (o.dir.empty()) o.dir = default_dir();
  struct stat st {};
  if (stat(o.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fmt::print(stderr, "cudashim exporter: the runtime folder {} is not a folder ({}); the shim creates it at a process's "
               "first CUDA call, or create it: mkdir -m 1777 {}\n", o.dir, std::strerror(errno ? errno : ENOTDIR), o.dir);
    return 3;
  }
  Exporter e{o, {}, {}, {}, {}, {}, 0, 0};
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  e.hostname = host;
  if (o.once) {
    std::cout << metrics(e);
    return 0;
  }
  const int lfd = listen_on(o);
  if (lfd < 0) return 3;
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  serve(e, lfd);
  close(lfd);
  return 0;
}

}  // namespace cudashim::tools
