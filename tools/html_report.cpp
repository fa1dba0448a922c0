// html_report.cpp: the HTML page, plots drawn as inline SVG.
#include "tools/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>

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

std::string label_of(const nlohmann::json& d) {
  const auto& p = d["process"];
  std::string exe = p.value("exe", "?");
  exe = exe.substr(exe.rfind('/') + 1);
  return p["rank"].is_number() ? fmt::format("rank {} (pid {}, {})", p["rank"].get<int>(), p.value("pid", 0), exe)
                               : fmt::format("pid {} ({})", p.value("pid", 0), exe);
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

std::string render_html(const std::vector<LoadedReport>& reports) {
  std::string h = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>cudashim report</title><style>"
                  "body{font-family:DejaVu Sans,sans-serif;margin:24px;color:#222}table{border-collapse:collapse}"
                  "td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px}th{background:#f0f0f0}"
                  ".warning{color:#b35900}.error{color:#c00}.info{color:#555}</style></head><body>";
  h += fmt::format("<h1>cudashim report</h1><p>{} process report(s)</p>", reports.size());
  // Processes
  h += "<h2>Processes</h2><table><tr><th>process</th><th>hooked calls</th><th>blocked</th><th>share of wall</th>"
       "<th>peak device memory</th></tr>";
  std::vector<const LoadedReport*> procs;
  for (const auto& r : reports)
    if (r.doc.value("schema", "") == "cudashim.report/1") procs.push_back(&r);
  for (const auto* r : procs) {
    const auto& d = r->doc;
    uint64_t calls = 0, peak = 0;
    for (const auto& [n, row] : d["api"].items()) calls += row.value("calls", 0ull);
    for (const auto& dev : d["memory"]["devices"]) peak = std::max<uint64_t>(peak, dev.value("peak_bytes", 0ull));
    const double b = d["blocking"].value("blocked_ns", 0ull) / 1e6, w = d["blocking"].value("wall_ns", 1ull) / 1e6;
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.1f} ms</td><td>{:.2f}%</td><td>{:.1f} MiB</td></tr>",
                     esc(label_of(d)), calls, b, 100 * b / w, peak / 1048576.0);
  }
  h += "</table>";
  // Memory over time, from the streams
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> series;
  for (const auto* r : procs) {
    std::ifstream nd(r->path.substr(0, r->path.size() - 5) + ".ndjson");
    std::map<int, std::vector<std::pair<double, double>>> per_dev;
    for (std::string line; std::getline(nd, line);) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.contains("devices")) continue;
      for (const auto& dev : j["devices"])
        per_dev[dev.value("device", 0)].push_back({j.value("t_ns", 0ull) / 1e9, dev.value("live_bytes", 0ull) / 1048576.0});
    }
    for (auto& [dev, pts] : per_dev) series.push_back({fmt::format("{}, device {}", label_of(r->doc), dev), std::move(pts)});
  }
  h += "<h2>Device memory over time</h2>";
  h += series.empty() ? "<p>No event streams (.ndjson) next to the reports.</p>" : line_chart(series);
  // Blocked time by call site
  std::vector<std::tuple<std::string, double, std::string>> sites;
  for (const auto* r : procs)
    for (const auto& f : r->doc["findings"])
      for (const auto& s : f["sites"])
        sites.emplace_back(site_where(s), s.value("blocked_ns", 0ull) / 1e6,
                           fmt::format("{:.2f} ms, {} calls, {}", s.value("blocked_ns", 0ull) / 1e6, s.value("count", 0ull),
                                       f.value("id", "")));
  std::sort(sites.begin(), sites.end(), [](const auto& a, const auto& b) { return std::get<1>(a) > std::get<1>(b); });
  if (sites.size() > 20) sites.resize(20);
  h += "<h2>Blocked time by call site</h2>";
  h += sites.empty() ? "<p>No finding has a call site.</p>" : bar_chart(sites, "#d62728");
  // Ranks side by side
  std::vector<std::tuple<std::string, double, std::string>> ranks_mem, ranks_blk;
  for (const auto* r : procs) {
    const auto& p = r->doc["process"];
    if (!p["rank"].is_number()) continue;
    uint64_t peak = 0;
    for (const auto& dev : r->doc["memory"]["devices"]) peak = std::max<uint64_t>(peak, dev.value("peak_bytes", 0ull));
    const double b = r->doc["blocking"].value("blocked_ns", 0ull) / 1e6;
    ranks_mem.emplace_back(fmt::format("rank {}", p["rank"].get<int>()), peak / 1048576.0, fmt::format("{:.1f} MiB", peak / 1048576.0));
    ranks_blk.emplace_back(fmt::format("rank {}", p["rank"].get<int>()), b, fmt::format("{:.2f} ms", b));
  }
  if (!ranks_mem.empty()) {
    h += "<h2>Ranks side by side</h2><h3>Peak device memory</h3>" + bar_chart(ranks_mem, "#1f77b4");
    h += "<h3>Blocked time</h3>" + bar_chart(ranks_blk, "#ff7f0e");
  }
  // Findings
  h += "<h2>Findings</h2><table><tr><th>process</th><th>severity</th><th>id</th><th>where</th><th>count</th>"
       "<th>blocked</th><th>fix</th></tr>";
  for (const auto* r : procs) {
    for (const auto& f : r->doc["findings"])
      h += fmt::format("<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2f} ms</td><td>{}</td></tr>",
                       esc(label_of(r->doc)), esc(f.value("severity", "")), esc(f.value("severity", "")), esc(f.value("id", "")),
                       esc(f["sites"].empty() ? std::string("(process-wide)") : site_where(f["sites"][0])),
                       f.value("count", 0ull), f.value("blocked_ns", 0ull) / 1e6, esc(f.value("fix", "")));
    for (const auto& f : r->doc["library_findings"])
      h += fmt::format("<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td></td><td></td><td>{}</td></tr>",
                       esc(label_of(r->doc)), esc(f.value("severity", "")), esc(f.value("severity", "")), esc(f.value("id", "")),
                       esc(f.value("message", "")), esc(f.value("fix", "")));
  }
  h += "</table></body></html>\n";
  return h;
}

}  // namespace cudashim::tools
