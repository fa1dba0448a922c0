// html_gpu_health.cpp: see html_gpu_health.h.
#include "tools/html_gpu_health.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "policy/rules/gpu_time.h"
#include "symbols/nvml_api.h"
#include "tools/report_reader.h"

namespace cudashim::tools {
namespace {

// A value or null, for the page's arrays.
nlohmann::json opt(const std::optional<uint64_t>& v, double scale) {
  return v ? nlohmann::json(*v / scale) : nlohmann::json();
}

inline constexpr const char* kHealthScript = R"JS(
(function () {
  var D = JSON.parse(document.getElementById('cudashim-data').textContent);
  var S = D.gpu_health || [], box = document.getElementById('healthchart');
  if (!box || !S.length) return;
  var NS = 'http://www.w3.org/2000/svg';
  var W = 1100, L = 84, R = 20, PH = 96, GAP = 26, T = 8;
  var colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];
  // Each panel: its title, unit and lines (a key of the series, dashed or not).
  var panels = [
    {id: 'clocks', title: 'clocks', unit: 'MHz', lines: [['sm_mhz', 'SM', 0], ['mem_mhz', 'memory', 1]]},
    {id: 'power', title: 'power and its limit', unit: 'W', lines: [['power_w', 'power', 0], ['limit_w', 'limit', 1]]},
    {id: 'temp', title: 'temperature', unit: '\u00B0C', lines: [['temp_c', 'GPU', 0]]},
    {id: 'memory', title: 'device memory in use (every process, NVML)', unit: 'GiB', lines: [['mem_used_gib', 'used', 0]]},
    {id: 'reasons', title: 'throttle reasons (power, thermal, hardware slowdown)', unit: '', lines: []}];
  var H = T + panels.length * (PH + GAP) + 22 * S.length + 20;
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function nice(v) { var s = Math.pow(10, Math.floor(Math.log10(v / 4))), m = v / 4 / s;
                     return s * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10); }
  var tmax = 1e-3;
  S.forEach(function (s) { s.t.forEach(function (t) { tmax = Math.max(tmax, t); }); });
  var memsvg = document.getElementById('memsvg');
  if (memsvg) tmax = Math.max(tmax, +(memsvg.getAttribute('data-tmax') || 0));
  var view = [0, tmax];
  var svg = el('svg', {id: 'healthsvg', width: W, height: H, role: 'img', 'aria-label': 'GPU health over time'}, box);
  var tip = document.getElementById('tip'), drag = null, sel = null;
  function X(t) { return L + (W - L - R) * (t - view[0]) / (view[1] - view[0]); }
  function top(i) { return T + i * (PH + GAP) + 14; }
  function ymaxOf(p) {
    var m = 0;
    S.forEach(function (s) { p.lines.forEach(function (ln) { s[ln[0]].forEach(function (v) { if (v !== null) m = Math.max(m, v); }); }); });
    return m > 0 ? m * 1.1 : 1;
  }
  function at(s, key, t) {  // the last sample at or before t
    var v = null;
    for (var i = 0; i < s.t.length && s.t[i] <= t; i++) v = s[key][i];
    return v;
  }
  function draw() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var clip = el('clipPath', {id: 'healthclip'}, el('defs', {}, svg));
    el('rect', {x: L, y: 0, width: W - L - R, height: H}, clip);
    var span = view[1] - view[0], xs = nice(span);
    panels.forEach(function (p, i) {
      var y0 = top(i), y1 = y0 + PH, g = el('g', {'class': 'health-panel', 'data-panel': p.id}, svg);
      el('text', {x: L, y: y0 - 4, 'font-size': 12, 'font-weight': 'bold'}, g).textContent = p.title;
      el('line', {x1: L, x2: W - R, y1: y1, y2: y1, stroke: '#333'}, g);
      el('line', {x1: L, x2: L, y1: y0, y2: y1, stroke: '#333'}, g);
      for (var t = Math.ceil(view[0] / xs) * xs; t <= view[1] + 1e-9; t += xs) {
        el('line', {x1: X(t), x2: X(t), y1: y1, y2: y1 + 3, stroke: '#333'}, g);
        if (i === panels.length - 1)
          el('text', {x: X(t), y: y1 + 15, 'font-size': 11, 'text-anchor': 'middle'}, g).textContent =
            (xs < 0.01 ? t.toFixed(3) : xs < 1 ? t.toFixed(2) : t.toFixed(0)) + ' s';
      }
      if (p.id === 'reasons') {
        S.forEach(function (s, k) {
          var c = colors[k % colors.length], rowY = y0 + 8 + (k % 6) * 14;
          el('text', {x: L - 6, y: rowY + 4, 'font-size': 10, 'text-anchor': 'end', fill: c}, g).textContent = 'dev ' + s.device;
          s.t.forEach(function (t, j) {
            if (!s.slowdown[j]) return;
            var x = X(t), x2 = X(j + 1 < s.t.length ? s.t[j + 1] : t + 1);
            el('rect', {x: x, y: rowY - 5, width: Math.max(x2 - x, 2), height: 10, fill: c, 'clip-path': 'url(#healthclip)',
                        'class': 'throttle', 'data-reasons': s.reasons[j]}, g);
          });
        });
        return;
      }
      var ymax = ymaxOf(p), ys = nice(ymax);
      function Y(v) { return y1 - (y1 - y0) * v / ymax; }
      for (var v = 0; v <= ymax; v += ys) {
        el('line', {x1: L, x2: W - R, y1: Y(v), y2: Y(v), stroke: '#eee'}, g);
        el('text', {x: L - 6, y: Y(v) + 4, 'font-size': 10, 'text-anchor': 'end'}, g).textContent =
          (ys < 1 ? v.toFixed(1) : v.toFixed(0)) + ' ' + p.unit;
      }
      S.forEach(function (s, k) {
        p.lines.forEach(function (ln) {
          var d = '', vals = s[ln[0]];
          s.t.forEach(function (t, j) {
            if (vals[j] === null) return;
            d += (d ? ' H' + X(t).toFixed(1) + ' V' : 'M' + X(t).toFixed(1) + ',') + Y(vals[j]).toFixed(1);
          });
          if (d) el('path', {d: d, fill: 'none', stroke: colors[k % colors.length], 'stroke-width': ln[2] ? 1.5 : 2,
                             'stroke-dasharray': ln[2] ? '5,4' : 'none', 'clip-path': 'url(#healthclip)', 'class': 'health-line',
                             'data-key': ln[0], 'data-series': s.label}, g);
        });
      });
    });
    S.forEach(function (s, k) {
      el('text', {x: L, y: top(panels.length - 1) + PH + 34 + 22 * k, 'font-size': 12, fill: colors[k % colors.length]},
         svg).textContent = '\u25A0 ' + s.label + (panels.length ? '  (dashed: memory clock, power limit)' : '');
    });
    sel = el('rect', {x: 0, y: T, width: 0, height: top(panels.length - 1) + PH - T, fill: '#1f77b4', opacity: 0.15,
                      display: 'none'}, svg);
    el('rect', {x: L, y: T, width: W - L - R, height: top(panels.length - 1) + PH - T, fill: 'transparent'}, svg);
    svg.setAttribute('data-view', view[0].toFixed(3) + ',' + view[1].toFixed(3));
  }
  function timeOf(ev) {
    var r = svg.getBoundingClientRect();
    return view[0] + (view[1] - view[0]) * (ev.clientX - r.left - L) / (W - L - R);
  }
  svg.addEventListener('mousemove', function (ev) {
    var t = timeOf(ev);
    if (drag !== null) {
      var a = Math.min(X(drag), X(t)), b = Math.max(X(drag), X(t));
      sel.setAttribute('x', a); sel.setAttribute('width', b - a); sel.setAttribute('display', 'inline');
    }
    if (t < view[0] || t > view[1]) { tip.style.display = 'none'; return; }
    var lines = [t.toFixed(3) + ' s'];
    S.forEach(function (s) {
      function f(key, unit, digits) { var v = at(s, key, t); return v === null ? '-' : v.toFixed(digits) + unit; }
      var r = at(s, 'reasons', t);
      lines.push(s.label + ': SM ' + f('sm_mhz', ' MHz', 0) + ', memory ' + f('mem_mhz', ' MHz', 0) + ', power ' +
                 f('power_w', ' W', 1) + ' of ' + f('limit_w', ' W', 0) + ', ' + f('temp_c', ' \u00B0C', 0) + ', ' +
                 f('mem_used_gib', ' GiB', 2) + ' used, reasons: ' + (r === null ? '-' : r || 'none'));
    });
    tip.textContent = lines.join('\n');
    tip.style.display = 'block';
    tip.style.left = (ev.pageX + 14) + 'px'; tip.style.top = (ev.pageY + 10) + 'px';
  });
  svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  svg.addEventListener('mousedown', function (ev) { drag = timeOf(ev); ev.preventDefault(); });
  function zoom(a, b) { if (window.cudashimZoom && memsvg) window.cudashimZoom(a, b); else { view = [a, b]; draw(); } }
  svg.addEventListener('mouseup', function (ev) {
    if (drag === null) return;
    var a = Math.max(Math.min(drag, timeOf(ev)), 0), b = Math.min(Math.max(drag, timeOf(ev)), tmax);
    drag = null;
    if (b - a > (view[1] - view[0]) / 200) zoom(a, b); else sel.setAttribute('display', 'none');
  });
  svg.addEventListener('dblclick', function () { zoom(0, tmax); });
  // The memory chart's zoom moves this axis too (html_assets.h calls every cudashimOnView).
  (window.cudashimOnView = window.cudashimOnView || []).push(function (v) { view = [v[0], v[1]]; draw(); });
  draw();
  var z = /zoom=([0-9.]+),([0-9.]+)/.exec(location.hash);
  if (z && +z[2] > +z[1]) { view = [+z[1], +z[2]]; draw(); }
})();
)JS";

}  // namespace

GpuHealthPart gpu_health_part(const std::vector<HealthSource>& sources) {
  GpuHealthPart part{"", nlohmann::json::array(), kHealthScript};
  size_t samples = 0;
  for (const HealthSource& src : sources) {
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(src.stream, ec))) continue;
    StreamSummary summary;
    std::vector<GpuHealthPoint> points;
    read_stream(src.stream, summary, nullptr, nullptr, &points);  // a damaged stream: the lines before it
    std::map<int64_t, nlohmann::json> per_dev;
    for (const GpuHealthPoint& p : points) {
      nlohmann::json& s = per_dev[p.device];
      if (s.is_null())
        s = {{"label", fmt::format("{}, device {}", src.label, p.device)}, {"device", p.device}, {"t", nlohmann::json::array()},
             {"sm_mhz", nlohmann::json::array()}, {"mem_mhz", nlohmann::json::array()}, {"power_w", nlohmann::json::array()},
             {"limit_w", nlohmann::json::array()}, {"temp_c", nlohmann::json::array()}, {"mem_used_gib", nlohmann::json::array()},
             {"reasons", nlohmann::json::array()}, {"slowdown", nlohmann::json::array()}};
      s["t"].push_back(p.t_ns / 1e9);
      s["sm_mhz"].push_back(opt(p.sm_mhz, 1));
      s["mem_mhz"].push_back(opt(p.mem_mhz, 1));
      s["power_w"].push_back(opt(p.power_mw, 1000));
      s["limit_w"].push_back(opt(p.power_limit_mw, 1000));
      s["temp_c"].push_back(opt(p.temp_c, 1));
      s["mem_used_gib"].push_back(opt(p.mem_used_bytes, 1073741824.0));
      // Every reason NVML gave, by name; "slowdown" marks the ones that hold the clocks down.
      s["reasons"].push_back(p.clock_event_reasons ? nlohmann::json(policy::clock_event_names(*p.clock_event_reasons))
                                                   : nlohmann::json());
      s["slowdown"].push_back(p.clock_event_reasons && (*p.clock_event_reasons & symbols::kClockEventsSlowdown) != 0);
      ++samples;
    }
    for (auto& [dev, s] : per_dev) part.data.push_back(std::move(s));
  }
  part.html = "<h2 id=\"gpu-health\">GPU health over time</h2>";
  if (part.data.empty()) {
    part.html += "<p class=\"muted\" id=\"gpu-health-none\">No health samples over time: no event stream (.ndjson) next "
                 "to the reports holds gpu_health lines (sampling off or unavailable, or the process ended before the "
                 "first tick; the reports' gpu_time.devices[].health has the steady state's extremes).</p>";
    return part;
  }
  part.html += fmt::format(
      "<p class=\"muted\" id=\"gpu-health-note\" data-samples=\"{}\">NVML's health samples (about one a second per "
      "device): SM and memory clocks, power against the enforced limit, temperature, device memory in use by every "
      "process, and the samples whose clocks power, thermal or hardware slowdown held down. Same time axis as the memory "
      "chart: hover for values; drag to zoom both; double-click to reset.</p><div id=\"healthchart\"></div>",
      samples);
  return part;
}

}  // namespace cudashim::tools
