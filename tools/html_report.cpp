// html_report.cpp: the HTML page, plots drawn as inline SVG.
#include "tools/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "tools/input_files.h"

namespace cudashim::tools {
namespace {

std::string esc(std::string_view s) {
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

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

std::string label_of(const ProcessReport& p) {
  std::string exe = p.exe.substr(p.exe.rfind('/') + 1);
  return p.rank ? fmt::format("rank {} (pid {}, {})", *p.rank, p.pid, exe) : fmt::format("pid {} ({})", p.pid, exe);
}

// A line chart of (seconds, MiB) series.
std::string line_chart(const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>& series) {
  const int W = 900, H = 260, L = 70, B = 30;
  double xmax = 1e-3, ymax = 1e-3;  // short runs still get a readable scale
  for (const auto& [n, pts] : series)
    for (const auto& [x, y] : pts) xmax = std::max(xmax, x), ymax = std::max(ymax, y);
  std::string s = fmt::format("<svg width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"device memory over time\">", W,
                              H + 10 + 16 * series.size());
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>", L, H - B, W - 10, H - B);
  s += fmt::format("<line x1=\"{}\" y1=\"10\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>", L, L, H - B);
  for (int i = 0; i <= 4; ++i) {
    const double y = H - B - (H - B - 10) * i / 4.0;
    s += fmt::format("<text x=\"5\" y=\"{:.0f}\" font-size=\"11\">{:.1f} MiB</text>", y + 4, ymax * i / 4);
    s += fmt::format("<text x=\"{:.0f}\" y=\"{}\" font-size=\"11\">{:.3g} s</text>", L + (W - 10 - L) * i / 4.0, H - B + 16,
                     xmax * i / 4);
  }
  int k = 0;
  for (const auto& [name, pts] : series) {
    std::string path;
    for (const auto& [x, y] : pts)
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", L + (W - 10 - L) * x / xmax,
                          H - B - (H - B - 10) * y / ymax);
    const char* c = kColors[k % 8];
    s += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>", path, c);
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"{}\">&#9632; {}</text>", L, H + 8 + 16 * k, c,
                     esc(name));
    ++k;
  }
  return s + "</svg>";
}

// A horizontal bar chart of (label, value, text).
std::string bar_chart(const std::vector<std::tuple<std::string, double, std::string>>& bars, const char* color) {
  const int W = 900, row = 22;
  double vmax = 1e-9;
  for (const auto& [l, v, t] : bars) vmax = std::max(vmax, v);
  std::string s = fmt::format("<svg width=\"{}\" height=\"{}\" role=\"img\">", W, row * bars.size() + 10);
  int i = 0;
  for (const auto& [label, v, text] : bars) {
    const double w = 420 * v / vmax;
    s += fmt::format("<text x=\"0\" y=\"{}\" font-size=\"12\">{}</text>", i * row + 15, esc(label.substr(0, 60)));
    s += fmt::format("<rect x=\"420\" y=\"{}\" width=\"{:.1f}\" height=\"16\" fill=\"{}\"/>", i * row + 3, std::max(w, 1.0), color);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\">{}</text>", 425 + std::max(w, 1.0), i * row + 15, esc(text));
    ++i;
  }
  return s + "</svg>";
}

}  // namespace

std::string render_html(const std::vector<LoadedReport>& reports, std::vector<std::string>& problems) {
  std::string h = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>cudashim report</title><style>"
                  "body{font-family:DejaVu Sans,sans-serif;margin:24px;color:#222}table{border-collapse:collapse}"
                  "td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px}th{background:#f0f0f0}"
                  ".warning{color:#b35900}.error{color:#c00}.info{color:#555}</style></head><body>";
  h += fmt::format("<h1>cudashim report</h1><p>{} process report(s)</p>", reports.size());
  // Processes
  h += "<h2>Processes</h2><table><tr><th>process</th><th>hooked calls</th><th>blocked</th><th>share of wall</th>"
       "<th>peak device memory</th></tr>";
  std::vector<std::pair<const LoadedReport*, const ProcessReport*>> procs;
  for (const auto& r : reports)
    if (const auto* p = std::get_if<ProcessReport>(&r.what)) procs.emplace_back(&r, p);
  auto peak_of = [](const ProcessReport& d) {
    uint64_t peak = 0;
    for (const DeviceMemory& dev : d.devices) peak = std::max(peak, dev.peak_bytes);
    return peak;
  };
  for (const auto& [r, d] : procs) {
    uint64_t calls = 0;
    for (const ApiRow& row : d->api) calls += row.calls;
    const double b = d->blocked_ns / 1e6, w = (d->wall_ns > 0 ? d->wall_ns : 1) / 1e6;
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.1f} ms</td><td>{:.2f}%</td><td>{:.1f} MiB</td></tr>",
                     esc(label_of(*d)), calls, b, 100 * b / w, peak_of(*d) / 1048576.0);
  }
  h += "</table>";
  // Memory over time, from the streams next to the reports (read as hostile as the reports:
  // tools/report_reader.h, read_stream); a stream that is missing is no problem.
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> series;
  for (const auto& [r, d] : procs) {
    const std::string stream = std::filesystem::path(r->path).replace_extension(".ndjson").string();
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(stream, ec))) continue;
    StreamSummary summary;
    std::vector<StreamCounters> samples;
    if (const std::string problem = read_stream(stream, summary, nullptr, &samples); !problem.empty())
      problems.push_back(fmt::format("{}: {} (the memory plot of {} stops there)", shown(stream), problem, label_of(*d)));
    std::map<int64_t, std::vector<std::pair<double, double>>> per_dev;
    for (const StreamCounters& c : samples)
      for (const DeviceMemory& dev : c.devices) per_dev[dev.device].push_back({c.t_ns / 1e9, dev.live_bytes / 1048576.0});
    for (auto& [dev, pts] : per_dev) series.push_back({fmt::format("{}, device {}", label_of(*d), dev), std::move(pts)});
  }
  h += "<h2>Device memory over time</h2>";
  h += series.empty() ? "<p>No event streams (.ndjson) next to the reports.</p>" : line_chart(series);
  // Blocked time by call site
  std::vector<std::tuple<std::string, double, std::string>> sites;
  for (const auto& [r, d] : procs)
    for (const Finding& f : d->findings)
      for (const FindingSite& s : f.sites)
        sites.emplace_back(s.text(), s.blocked_ns / 1e6,
                           fmt::format("{:.2f} ms, {} calls, {}", s.blocked_ns / 1e6, s.count, f.id));
  std::sort(sites.begin(), sites.end(), [](const auto& a, const auto& b) { return std::get<1>(a) > std::get<1>(b); });
  if (sites.size() > 20) sites.resize(20);
  h += "<h2>Blocked time by call site</h2>";
  h += sites.empty() ? "<p>No finding has a call site.</p>" : bar_chart(sites, "#d62728");
  // Ranks side by side
  std::vector<std::tuple<std::string, double, std::string>> ranks_mem, ranks_blk;
  for (const auto& [r, d] : procs) {
    if (!d->rank) continue;
    const uint64_t peak = peak_of(*d);
    const double b = d->blocked_ns / 1e6;
    ranks_mem.emplace_back(fmt::format("rank {}", *d->rank), peak / 1048576.0, fmt::format("{:.1f} MiB", peak / 1048576.0));
    ranks_blk.emplace_back(fmt::format("rank {}", *d->rank), b, fmt::format("{:.2f} ms", b));
  }
  if (!ranks_mem.empty()) {
    h += "<h2>Ranks side by side</h2><h3>Peak device memory</h3>" + bar_chart(ranks_mem, "#1f77b4");
    h += "<h3>Blocked time</h3>" + bar_chart(ranks_blk, "#ff7f0e");
  }
  // Findings
  h += "<h2>Findings</h2><table><tr><th>process</th><th>severity</th><th>id</th><th>where</th><th>count</th>"
       "<th>blocked</th><th>fix</th></tr>";
  for (const auto& [r, d] : procs) {
    for (const Finding& f : d->findings)
      h += fmt::format("<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2f} ms</td><td>{}</td></tr>",
                       esc(label_of(*d)), esc(f.severity), esc(f.severity), esc(f.id),
                       esc(f.sites.empty() ? std::string("(process-wide)") : f.sites[0].text()), f.count,
                       f.blocked_ns / 1e6, esc(f.fix));
    for (const Finding& f : d->library_findings)
      h += fmt::format("<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td></td><td></td><td>{}</td></tr>",
                       esc(label_of(*d)), esc(f.severity), esc(f.severity), esc(f.id), esc(f.message), esc(f.fix));
  }
  h += "</table></body></html>\n";
  return h;
}

}  // namespace cudashim::tools
