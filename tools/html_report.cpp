// html_report.cpp: the HTML page. What a reader needs first comes first: what ran
// (command, host, versions), the crashes, the findings with every site, the out-of-memory
// events, then memory over time, leaks, the libraries and why each file, the policy, the
// pool and torch's allocator. Tables are HTML (text wraps, nothing is clipped); the memory
// chart is drawn by the page's own script from the data it carries (tools/html_assets.h).
#include "tools/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>
#include <nlohmann/json.hpp>

#include "tools/html_assets.h"
#include "tools/html_gpu_health.h"
#include "tools/input_files.h"
#include "tools/text_units.h"

namespace cudashim::tools {
namespace {

// Text from a file, for the page: as the terminal gets it (shown), then HTML-escaped.
std::string esc(std::string_view raw) {
  const std::string s = shown(raw);
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

// The report's torch_memory.state (recorder/torch_memory.cpp names them) in words for the page:
// "no_python" in the frameworks column read as a value, not as what it means.
std::string torch_state_words(const std::string& state) {
  static const std::pair<const char*, const char*> kWords[] = {
      {"read", "torch.cuda in use"},
      {"no_python", "not a Python process"},
      {"no_torch", "Python, no torch.cuda"},
      {"torch_cuda_not_initialized", "torch imported, CUDA not used"},
      {"off", "torch counters off"},
      {"not_registered", "torch counters not read (exit handler never registered)"},
      {"not_reached", "torch counters not read (Python's exit never ran)"},
      {"failed", "torch counters failed"},
  };
  for (const auto& [name, words] : kWords)
    if (state == name) return words;
  return state.empty() ? "?" : state;
}

std::string label_of(const ProcessReport& p) {
  const std::string exe = p.exe.substr(p.exe.rfind('/') + 1);
  return p.rank ? fmt::format("rank {} (pid {}, {})", *p.rank, p.pid, exe) : fmt::format("pid {} ({})", p.pid, exe);
}

uint64_t peak_of(const ProcessReport& d) {
  uint64_t peak = 0;
  for (const DeviceMemory& dev : d.devices) peak = std::max(peak, dev.peak_bytes);
  return peak;
}

std::string command_of(const ProcessReport& d) {
  std::string cmd;
  for (const std::string& a : d.argv) cmd += (cmd.empty() ? "" : " ") + a;
  return cmd.empty() ? d.exe : cmd;
}

std::string cuda_runtimes(const ProcessReport& d) {
  std::string out;
  for (const LoadedLibrary& l : d.libraries)
    if (l.family == "cudart")
      out += fmt::format("{}{} <span class=\"muted\">{}{}</span>", out.empty() ? "" : "<br>",
                         esc(l.version.empty() ? "?" : l.version), esc(l.file), l.linkage == "static" ? " (static)" : "");
  return out.empty() ? "none loaded" : out;
}

using Procs = std::vector<std::pair<const LoadedReport*, const ProcessReport*>>;

// What ran: one row per process.
std::string run_section(const Procs& procs) {
  std::string h = "<h2 id=\"run\">What ran</h2><table id=\"meta\"><tr><th>process</th><th>command</th><th>host</th>"
                  "<th>GPUs</th><th>driver</th><th>CUDA runtime</th>"
                  "<th>frameworks</th><th>cudashim</th></tr>";
  for (const auto& [r, d] : procs) {
    std::string gpus;
    for (const GpuName& g : d->gpus)
      gpus += fmt::format("{}<span class=\"gpu-name\">{} {}</span>{}", gpus.empty() ? "" : "<br>", g.device,
                          esc(g.name.empty() ? "?" : g.name),
                          g.compute_capability.empty() ? "" : " <span class=\"muted\">sm " + esc(g.compute_capability) + "</span>");
    if (gpus.empty())  // a report from before "devices": the devices that held memory
      for (const DeviceMemory& dev : d->devices) gpus += fmt::format("{}device {}", gpus.empty() ? "" : ", ", dev.device);
    const std::string torch = torch_state_words(d->torch_state);
    std::string frameworks;
    for (const FrameworkVersion& f : d->frameworks)
      frameworks += fmt::format("{}<span class=\"framework\">{} {}</span>{}", frameworks.empty() ? "" : "<br>", esc(f.name),
                                esc(f.version.empty() ? "?" : f.version),
                                f.cuda.empty() ? "" : " <span class=\"muted\">CUDA " + esc(f.cuda) + "</span>");
    std::string driver = d->libcuda_loaded ? esc(*d->libcuda_loaded) : "not loaded";
    if (d->kernel_module) driver = fmt::format("<span class=\"kernel-module\">{}</span><br><span class=\"muted\">{}</span>",
                                               esc(*d->kernel_module), driver);
    if (d->driver_cuda_version > 0)
      driver = fmt::format("<span class=\"driver-cuda\">CUDA {}</span><br>{}", cuda_version_text(d->driver_cuda_version),
                           d->kernel_module ? driver : "<span class=\"muted\">" + driver + "</span>");
    h += fmt::format("<tr class=\"proc\" data-pid=\"{}\"><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td>"
                     "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                     d->pid, esc(label_of(*d)), esc(command_of(*d)), esc(d->host), gpus.empty() ? "none" : gpus, driver,
                     cuda_runtimes(*d), frameworks.empty() ? esc(torch) : frameworks + "<br><span class=\"muted\">" + esc(torch) + "</span>",
                     esc(d->cudashim_version));
  }
  h += "</table>";
  return h;
}

std::string overview_section(const Procs& procs, size_t crashes) {
  uint64_t calls = 0, blocked = 0, wall = 0, peak = 0, ooms = 0, warnings = 0, infos = 0, leaked = 0;
  uint64_t own_ns = 0, own_wall = 0;  // cudashim's own cost (self_cost: reports since issue 33)
  double steady_ns = 0;                // its steady share times each wall (self_cost.steady)
  bool all_steady = true;
  for (const auto& [r, d] : procs) {
    for (const ApiRow& row : d->api) calls += row.calls;
    if (d->self_cost) {
      own_ns += d->self_cost->threads_cpu_ns + d->self_cost->hooks_ns_estimate, own_wall += d->wall_ns;
      if (d->self_cost->steady_share_of_wall_pct) steady_ns += *d->self_cost->steady_share_of_wall_pct / 100.0 * d->wall_ns;
      else all_steady = false;
    }
    blocked += d->blocked_ns;
    wall += d->wall_ns;
    peak = std::max(peak, peak_of(*d));
    ooms += d->oom.count;
    // Warnings (and errors) apart from info: "2 findings" for two notes with nothing to do read as two problems.
    for (const auto* list : {&d->findings, &d->library_findings})
      for (const Finding& f : *list) (f.severity() == Severity::info ? infos : warnings) += 1;
    leaked += d->leaked_bytes;
  }
  auto card = [](const std::string& id, const std::string& value, const std::string& what) {
    return fmt::format("<div class=\"card\" id=\"card-{}\"><b>{}</b><span>{}</span></div>", id, value, what);
  };
  return "<div class=\"cards\">" + card("processes", std::to_string(procs.size()), "processes") +
         card("crashes", std::to_string(crashes), "crashes") + card("findings", std::to_string(warnings), fmt::format("{}{}", warnings == 1 ? "warning" : "warnings", infos ? fmt::format(", and {} info", infos) : "")) +
         card("blocked", fmt::format("{} ({:.1f}%)", human_ns(blocked), wall ? 100.0 * blocked / wall : 0.0),
              "blocked in syncs (share of wall)") +
         card("peak", human_bytes(peak), "peak device memory (one process)") +
         card("ooms", std::to_string(ooms), "out-of-memory answers") + card("leaked", human_bytes(leaked), "live at exit") +
         fmt::format("</div><p class=\"muted\">{} hooked calls in all.{}</p>", calls,
                     own_wall ? fmt::format(" <span id=\"self-cost\">cudashim used {:.2f}% of the run ({} in its threads' CPU "
                                            "time and, estimated, its hooks{}).</span>",
                                            100.0 * own_ns / own_wall, human_ns(own_ns),
                                            all_steady ? fmt::format("; {:.2f}% once started", 100.0 * steady_ns / own_wall) : "")
                              : "");
}

std::string crash_section(const std::vector<LoadedReport>& reports) {
  std::string h;
  for (const LoadedReport& r : reports) {
    const auto* c = std::get_if<CrashRecord>(&r.what);
    if (!c) continue;
    if (h.empty()) h = "<h2 id=\"crashes\">Crashes</h2>";
    h += fmt::format("<p class=\"error crash\" data-pid=\"{}\">process {} crashed: {}</p>", c->pid, c->pid,
                     c->reason == "signal" ? esc(c->signal_name) + " at " + esc(c->fault_address)
                                           : esc(c->api) + fmt::format(" returned {}", c->result));
    if (!c->backtrace.empty()) {
      h += "<table class=\"backtrace\"><tr><th>#</th><th>frame</th><th>address</th></tr>";
      for (size_t i = 0; i < c->backtrace.size(); ++i)
        h += fmt::format("<tr><td class=\"num\">{}</td><td>{}</td><td><code>{:#x}</code></td></tr>", i,
                         esc(c->backtrace[i].source.value_or("?")), c->backtrace[i].address);
      h += "</table>";
    }
    h += fmt::format("<p class=\"muted\">flight record: {}</p>", esc(r.path));
  }
  return h;
}

// Every finding and every site, each row naming its process; a click shows the stacks.
std::string findings_section(const Procs& procs) {
  std::string h = "<h2 id=\"findings\">Findings</h2><p class=\"muted\">Click a site for its stacks.</p>"
                  "<table id=\"findings-table\"><tr><th>process</th><th>severity</th><th>finding</th><th>site</th>"
                  "<th>calls</th><th>blocked</th><th title=\"GPU idle from each drain to the thread's next launch\">GPU idle after"
                  "</th><th>fix</th></tr>";
  // A bar's full width (120 px) is the process's wall time: a 0.02 % habit draws as one pixel.
  size_t rows = 0;
  for (const auto& [r, d] : procs) {
    for (const Finding& f : d->findings) {
      std::vector<RecordedSite> sites = f.recorded.sites;
      if (sites.empty()) {
        RecordedSite whole;
        whole.where = "(process-wide)";
        whole.count = f.count;
        whole.blocked_ns = f.blocked_ns;
        sites.push_back(std::move(whole));
      }
      // Its price, beside the finding's id on its first row (docs/findings.md, "What a finding costs").
      std::string price;
      const auto& saving = f.recorded.predicted_saving_per_step_ns;
      const auto& step = f.recorded.step_ns;
      if (saving && f.steps)
        price = fmt::format("<br><span class=\"saving muted\" data-saving-ms=\"{:.3f}\">save {:.3f} ms/step{}</span>",
                            *saving / 1e6, *saving / 1e6,
                            step && *step ? fmt::format(" ({:.1f}% of the step)", 100.0 * *saving / *step) : std::string());
      for (const std::string& a : f.recorded.also) price += "<br><span class=\"muted\">also " + esc(a) + "</span>";
      for (const RecordedSite& s : sites) {
        const double ms = s.blocked_ns / 1e6;
        // Beside the blocked time, the GPU idle its drains left (absent in older reports: a dash).
        const std::string idle = s.gpu_idle_after_ns ? fmt::format("{:.2f} ms", *s.gpu_idle_after_ns / 1e6) : "&ndash;";
        const std::string idle_attr =
            s.gpu_idle_after_ns ? fmt::format(" data-idle-after-ms=\"{:.3f}\"", *s.gpu_idle_after_ns / 1e6) : "";
        // A waiter's site (docs/python.md, "Syncs on threads with no Python frame"): its count is
        // samples of the main thread waiting there, and it has no blocked time of its own.
        const std::string calls =
            s.sampled ? fmt::format("<span title=\"samples of the main thread waiting at this line while another thread "
                                    "read back from the device\">{} samples</span>", s.count)
                      : fmt::format("{}", s.count);
        const std::string blocked =
            s.sampled ? std::string("<span class=\"muted\">sampled, not timed</span>")
                      : fmt::format("<span class=\"bar\" style=\"width:{:.0f}px\" title=\"{:.2f}% of the wall time\"></span>{:.2f} ms",
                                    std::max(1.0, d->wall_ns ? 120 * ms * 1e6 / d->wall_ns : 1.0),
                                    d->wall_ns ? 100 * ms * 1e6 / d->wall_ns : 0.0, ms);
        h += fmt::format("<tr class=\"site\" data-pid=\"{}\" data-finding=\"{}\" data-blocked-ms=\"{:.3f}\"{}{}><td>{}</td>"
                         "<td class=\"{}\">{}</td><td>{}{}</td><td>{}{}</td><td class=\"num\">{}</td>"
                         "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                         d->pid, esc(f.name()), ms, idle_attr, s.sampled ? " data-sampled=\"1\"" : "", esc(label_of(*d)),
                         severity_name(f.severity()), severity_name(f.severity()), esc(f.name()),
                         std::exchange(price, std::string()), esc(s.text()),
                         s.api.empty() ? "" : " <span class=\"muted\">(" + esc(s.api) + ")</span>", calls, blocked, idle,
                         esc(f.fix()));
        std::string stacks;
        if (!s.python.empty()) {
          stacks += "Python, innermost first:\n";
          for (const std::string& p : s.python) stacks += "  " + esc(p) + "\n";
        }
        if (!s.native_source.empty()) {
          stacks += "native, innermost first:\n";
          for (const std::string& n : s.native_source) stacks += "  " + esc(n) + "\n";
        }
        h += fmt::format("<tr class=\"stacks\" hidden><td colspan=\"8\">{}</td></tr>",
                         stacks.empty() ? "no stack was recorded for this site" : stacks);
        ++rows;
      }
    }
    for (const Finding& f : d->library_findings) {
      h += fmt::format("<tr class=\"library-finding\" data-pid=\"{}\" data-finding=\"{}\"><td>{}</td><td class=\"{}\">{}"
                       "</td><td>{}</td><td colspan=\"4\">{}</td><td>{}</td></tr>",
                       d->pid, esc(f.name()), esc(label_of(*d)), severity_name(f.severity()), severity_name(f.severity()),
                       esc(f.name()), esc(f.message), esc(f.fix()));
      ++rows;
    }
  }
  if (rows == 0) h += "<tr><td colspan=\"8\">No finding.</td></tr>";
  return h + "</table>";
}

// The split of a device's idle share as the report has it (policy/rules/gpu_time.cpp decided it):
// a bar whose full width is the steady state (the step), busy, after syncs, host between
// launches and unexplained side by side, and the summary line under it. "" before the split.
std::string split_bar(const GpuTimeDevice& g) {
  if (!g.split) return "";
  const GpuTimeDevice::Split& s = *g.split;
  auto part = [](const char* cls, double share, const char* what) {
    return share > 0 ? fmt::format("<span class=\"{}\" style=\"width:{:.2f}%\" title=\"{}: {:.1f}% of the step\"></span>", cls,
                                   100 * share, what, 100 * share)
                     : std::string();
  };
  return fmt::format("<div class=\"idle-split\" data-after-syncs=\"{:.4f}\" data-host-between=\"{:.4f}\" "
                     "data-unexplained=\"{:.4f}\"><span class=\"split\">{}{}{}{}</span>"
                     "<span class=\"muted\">{}</span></div>",
                     s.after_syncs, s.host_between, s.unexplained,
                     part("busy", std::max(0.0, 1.0 - s.idle), "GPU busy"), part("syncs", s.after_syncs, "idle after syncs"),
                     part("host", s.host_between, "idle, the host between launches"),
                     part("unexplained", s.unexplained, "idle, unexplained"), esc(g.summary));
}

// The GPU's side (the reports' gpu_time sections, docs/gpu-time.md): each sampled device's idle
// share of the steady state, its diagnosis and the GPU findings; a note where no report has samples.
std::string gpu_time_section(const Procs& procs) {
  std::string rows;
  for (const auto& [r, d] : procs) {
    for (const GpuTimeDevice& g : d->gpu_time.devices) {
      if (!g.steady_idle && !g.precise_steady_idle) continue;
      std::string findings;
      for (const Finding& f : d->gpu_time.findings)
        if (f.recorded.device == g.device)
          findings += fmt::format("<div><span class=\"sev {}\">{}</span> {}: {}<br><span class=\"muted\">fix: {}</span></div>",
                                  severity_name(f.severity()), esc(f.name()), severity_name(f.severity()),
                                  esc(f.recorded.title), esc(f.fix()));
      auto share = [](const std::optional<double>& v, const char* before = "") {
        return v ? fmt::format("{}{:.1f}%", before, 100 * *v) : std::string("-");
      };
      const double idle = g.precise_steady_idle ? *g.precise_steady_idle : *g.steady_idle;
      rows += fmt::format("<tr data-pid=\"{}\" data-device=\"{}\" data-idle=\"{:.3f}\"><td>{}</td><td>{}</td>"
                          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                          "<td>{}{}</td><td>{}</td></tr>",
                          d->pid, g.device, idle, esc(label_of(*d)), g.device, share(g.precise_steady_idle),
                          share(g.steady_idle, g.idle_lower_bound ? "&ge; " : ""), share(g.process_steady_idle),
                          g.steady_samples, esc(g.diagnosis.empty() ? "-" : g.diagnosis), split_bar(g), findings.empty() ? "-" : findings);
    }
  }
  if (rows.empty())
    return "<h2 id=\"gpu-time\">GPU time</h2><p class=\"muted\" id=\"gpu-time-none\">Not measured: no report here holds "
           "NVML utilization samples (sampling off or unavailable, or reports from before cudashim sampled the GPU; "
           "docs/gpu-time.md).</p>";
  return "<h2 id=\"gpu-time\">GPU time</h2><p class=\"muted\">The share of each process's steady state in which the GPU "
         "ran none of its work: from the GPU's own timestamps (CUPTI) in the precise mode, and from NVML's utilization "
         "samples, the share of each sample period in which no kernel ran (&ge;: kernels too short for NVML to resolve; "
         "docs/gpu-time.md says what each can resolve).</p>"
         "<table id=\"gpu-time-table\"><tr><th>process</th><th>device</th><th>idle (CUPTI)</th><th>idle (NVML, device)</th>"
         "<th>idle (NVML, this process's kernels)</th><th>NVML samples</th><th>diagnosis (the bar: the step; green busy, "
         "red idle after syncs, orange the host between launches, grey unexplained)</th><th>findings</th></tr>" +
         rows + "</table>";
}

// Rows of call sites holding memory; leaks (`with_kind_and_age`) also say the kind and age.
std::string sites_rows(const std::vector<MemorySite>& sites, bool with_kind_and_age) {
  std::string h;
  for (const MemorySite& m : sites)
    h += fmt::format("<tr><td>{}</td><td>{}</td>{}<td class=\"num\">{}</td><td class=\"num\">{}</td>{}</tr>",
                     m.where ? esc(*m.where) : "(call sites off)", m.api ? esc(*m.api) : "?",
                     with_kind_and_age ? "<td>" + esc(m.kind) + "</td>" : "", m.count, human_bytes(m.bytes),
                     with_kind_and_age ? "<td class=\"num\">" + human_ns(m.oldest_age_ns) + "</td>" : "");
  return h;
}

std::string oom_section(const Procs& procs) {
  std::string h;
  for (const auto& [r, d] : procs) {
    const OomEvents& o = d->oom;
    if (o.count == 0) continue;
    if (h.empty()) h = "<h2 id=\"oom\">Out of memory</h2>";
    h += fmt::format("<p class=\"oom\" data-pid=\"{}\" data-count=\"{}\" data-denied=\"{}\"><b>{}</b>: {} allocations got "
                     "CUDA_ERROR_OUT_OF_MEMORY, {} denied by cudashim's policy.</p>",
                     d->pid, o.count, o.denied_by_policy, esc(label_of(*d)), o.count, o.denied_by_policy);
    if (!o.has_context) continue;
    h += fmt::format("<p>The first: <code>{}</code> of {} on device {} ({}{}).</p>", esc(o.api),
                     human_bytes(o.requested_bytes), o.device, esc(o.reason),
                     o.context_denied_by_policy ? ", denied by the policy" : "");
    h += "<table><tr><th>device</th><th>in use</th><th>cap</th><th>cached in the pool</th><th>largest block</th></tr>";
    for (const OomDevice& dev : o.devices)
      h += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                       "<td class=\"num\">{} ({})</td></tr>",
                       dev.device, human_bytes(dev.in_use_bytes), dev.cap_bytes ? human_bytes(dev.cap_bytes) : "none",
                       human_bytes(dev.cached_bytes), human_bytes(dev.largest_block_bytes), esc(dev.largest_block_basis));
    h += "</table>";
    if (!o.top_sites.empty())
      h += "<table class=\"oom-sites\"><tr><th>holding the memory then</th><th>api</th><th>allocations</th>"
           "<th>bytes</th></tr>" + sites_rows(o.top_sites, false) + "</table>";
  }
  return h;
}

std::string leaks_section(const Procs& procs) {
  std::string h = "<h2 id=\"leaks\">Live at exit</h2>";
  bool any = false;
  for (const auto& [r, d] : procs) {
    if (d->leaked_allocations == 0) continue;
    any = true;
    h += fmt::format("<p><b>{}</b>: {} in {} allocations.</p><table class=\"leaks\"><tr><th>site</th><th>api</th>"
                     "<th>kind</th><th>allocations</th><th>bytes</th><th>oldest</th></tr>{}</table>",
                     esc(label_of(*d)), human_bytes(d->leaked_bytes), d->leaked_allocations, sites_rows(d->leaks, true));
  }
  return any ? h : h + "<p>Nothing was live at exit.</p>";
}

std::string libraries_section(const Procs& procs) {
  std::string h = "<h2 id=\"libraries\">Libraries</h2><table id=\"libraries-table\"><tr><th>process</th><th>family</th>"
                  "<th>version</th><th>file</th><th>how, by whom</th><th>why this file</th></tr>";
  for (const auto& [r, d] : procs)
    for (const LoadedLibrary& l : d->libraries)
      h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td></tr>", esc(label_of(*d)),
                       esc(l.family), esc(l.version.empty() ? "?" : l.version), esc(l.file),
                       esc(l.how.empty() ? "before cudashim saw" : l.how),
                       l.loaded_by.empty() ? "" : " by " + esc(l.loaded_by), esc(l.reason));
  return h + "</table>";
}

std::string policy_section(const Procs& procs) {
  std::string h = "<h2 id=\"policy\">Policy, pool and torch's allocator</h2><table id=\"policy-table\"><tr><th>process</th>"
                  "<th>memory cap</th><th>managed memory</th><th>set by</th><th>framework settings applied</th>"
                  "<th>pool</th><th>torch's allocator</th></tr>";
  for (const auto& [r, d] : procs) {
    const PolicyInForce& p = d->policy;
    std::string sources, applied, pool, torch;
    for (const auto& [name, where] : p.sources) sources += esc(name) + " from " + esc(where) + "<br>";
    for (const AppliedSetting& a : p.applied_env)
      applied += fmt::format("<code>{}={}</code>{}<br>", esc(a.name), esc(a.value), a.forced ? " (replaced the job's)" : "");
    if (!d->pool.enabled) pool = "off";
    else {
      pool = fmt::format("on, at most {} cached", human_bytes(d->pool.max_cached_bytes));
      for (const PoolDevice& dev : d->pool.devices)
        pool += fmt::format("<br>device {}: {} hits, {} misses, {} trims", dev.device, dev.hits, dev.misses, dev.trims);
    }
    for (const TorchSnapshot& snap : d->torch)
      for (const TorchDevice& td : snap.devices)
        torch += fmt::format("{}device {} at {}: {} allocated of {} reserved ({:.0f}% unallocated){}<br>",
                             td.fragmented ? "<span class=\"warning\">fragmented</span> " : "", td.device, esc(snap.moment),
                             human_bytes(td.allocated_bytes), human_bytes(td.reserved_bytes), 100 * td.fragmentation,
                             td.alloc_retries ? fmt::format(", {} retries", td.alloc_retries) : "");
    if (torch.empty()) torch = "not read (" + esc(torch_state_words(d->torch_state)) + ")";
    h += fmt::format("<tr><td>{}</td><td>{}{}</td><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                     esc(label_of(*d)), p.mem_cap ? esc(*p.mem_cap) : "none",
                     p.cap_bytes_device0 ? fmt::format(" ({} on device 0)", human_bytes(p.cap_bytes_device0)) : "",
                     p.present ? esc(p.managed) : "?", p.locked ? ", locked" : "", sources.empty() ? "defaults" : sources,
                     applied.empty() ? "none" : applied, pool, torch);
  }
  return h + "</table>";
}

// The memory chart's data: per process and device, the stream's samples (seconds, MiB),
// the report's peak, and the sampling window the peak was first reached in (the first
// sample whose peak_bytes is the report's peak, and the one before it).
nlohmann::json memory_data(const Procs& procs, std::vector<std::string>& problems) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [r, d] : procs) {
    const std::string stream = std::filesystem::path(r->path).replace_extension(".ndjson").string();
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(stream, ec))) continue;
    StreamSummary summary;
    std::vector<StreamCounters> samples;
    if (const std::string problem = read_stream(stream, summary, nullptr, &samples); !problem.empty())
      problems.push_back(fmt::format("{}: {} (the memory plot of {} stops there)", shown(stream), problem, label_of(*d)));
    std::map<int64_t, nlohmann::json> per_dev;
    std::map<int64_t, std::pair<double, uint64_t>> last;  // previous sample's time and peak
    std::map<int64_t, nlohmann::json> window;
    std::map<int64_t, uint64_t> report_peak;
    for (const DeviceMemory& dev : d->devices) report_peak[dev.device] = dev.peak_bytes;
    for (const StreamCounters& c : samples)
      for (const DeviceMemory& dev : c.devices) {
        const double t = c.t_ns / 1e9;
        per_dev[dev.device].push_back({t, dev.live_bytes / 1048576.0});
        const auto rp = report_peak.find(dev.device);
        if (rp != report_peak.end() && window[dev.device].is_null() && dev.peak_bytes >= rp->second && rp->second > 0)
          window[dev.device] = {last.count(dev.device) ? last[dev.device].first : 0.0, t};
        last[dev.device] = {t, dev.peak_bytes};
      }
    for (auto& [dev, pts] : per_dev) {
      const auto rp = report_peak.find(dev);
      out.push_back({{"label", fmt::format("{}, device {}", label_of(*d), dev)},
                     {"points", std::move(pts)},
                     {"peak_mib", rp != report_peak.end() ? rp->second / 1048576.0 : 0.0},
                     {"peak_window", window[dev]}});
    }
  }
  return out;
}

std::string ranks_section(const Procs& procs) {
  std::string h;
  for (const auto& [r, d] : procs) {
    if (!d->rank) continue;
    if (h.empty())
      h = "<h2 id=\"ranks\">Ranks side by side</h2><table><tr><th>rank</th><th>peak device memory</th><th>blocked</th>"
          "<th>out-of-memory answers</th></tr>";
    h += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                     *d->rank, human_bytes(peak_of(*d)), human_ns(d->blocked_ns), d->oom.count);
  }
  return h.empty() ? h : h + "</table>";
}

}  // namespace

std::string render_html(const std::vector<LoadedReport>& reports, std::vector<std::string>& problems) {
  Procs procs;
  size_t crashes = 0;
  for (const auto& r : reports) {
    if (const auto* p = std::get_if<ProcessReport>(&r.what)) procs.emplace_back(&r, p);
    if (std::holds_alternative<CrashRecord>(r.what)) ++crashes;
  }
  std::vector<HealthSource> health_sources;
  for (const auto& [r, d] : procs)
    health_sources.push_back({label_of(*d), std::filesystem::path(r->path).replace_extension(".ndjson").string()});
  const GpuHealthPart health = gpu_health_part(health_sources);
  nlohmann::json data = {{"memory", memory_data(procs, problems)}, {"gpu_health", health.data}};
  std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // Inside <script>, "</" could end the element: JSON allows the slash escaped.
  for (size_t at = 0; (at = json.find("</", at)) != std::string::npos; at += 3) json.replace(at, 2, "<\\/");
  std::string h = fmt::format("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>cudashim report</title>"
                              "<style>{}</style></head><body>",
                              kPageStyle);
  h += fmt::format("<h1>cudashim report</h1><p class=\"muted\">{} process report(s), {} flight record(s)</p>", procs.size(),
                   crashes);
  h += overview_section(procs, crashes);
  h += run_section(procs);
  h += crash_section(reports);
  h += findings_section(procs);
  h += oom_section(procs);
  h += gpu_time_section(procs);
  h += "<h2 id=\"memory\">Device memory over time</h2>";
  if (data["memory"].empty())
    h += "<p>No event streams (.ndjson) next to the reports.</p>";
  else
    h += "<p class=\"muted\">One step per sample of the event stream (about one a second): memory between two samples "
         "is not seen, so the report's true peak is drawn as a dashed line, with the sampling window it was reached in. "
         "Hover for values; drag to zoom the time axis; double-click to reset.</p>"
         "<button id=\"memreset\">Reset zoom</button><div id=\"memchart\"></div>";
  h += health.html;
  h += leaks_section(procs);
  h += libraries_section(procs);
  h += policy_section(procs);
  h += ranks_section(procs);
  h += "<div id=\"tip\"></div><script type=\"application/json\" id=\"cudashim-data\">" + json + "</script>";
  h += fmt::format("<script>{}</script><script>{}</script></body></html>\n", kPageScript, health.script);
  return h;
}

}  // namespace cudashim::tools
