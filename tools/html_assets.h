// html_assets.h: the style and the script of the `cudashim report --html` page, inlined
// into it (the page loads nothing: no network, no library). The script reads the data the
// page carries (<script type="application/json" id="cudashim-data">, html_report.cpp) and
// draws the memory chart as SVG: a step chart of the stream's samples (each value holds
// until the next sample), the true peak of the report as a line with the window it was
// reached in, a tooltip with every series' value under the pointer, and a time axis that
// zooms to a dragged range (double-click or "Reset zoom" shows all). A click on a
// finding's site shows its stacks.
#pragma once

namespace cudashim::tools {

inline constexpr const char* kPageStyle = R"CSS(
body{font-family:DejaVu Sans,Arial,sans-serif;margin:20px 28px;color:#1d1d1d;max-width:1240px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}
table{border-collapse:collapse;margin:4px 0 8px}td,th{border:1px solid #d4d4d4;padding:3px 8px;font-size:13px;
text-align:left;vertical-align:top}th{background:#f2f2f2}td.num{text-align:right;white-space:nowrap}
.warning{color:#a35200;font-weight:bold}.error{color:#c00;font-weight:bold}.info{color:#555}
.cards{display:flex;gap:12px;flex-wrap:wrap}.card{border:1px solid #d4d4d4;border-radius:6px;padding:8px 14px;min-width:150px}
.card b{display:block;font-size:20px}.card span{font-size:12px;color:#555}
.muted{color:#666;font-size:13px}tr.site{cursor:pointer}tr.site:hover{background:#f6f9ff}
tr.stacks td{background:#fafafa;font-family:DejaVu Sans Mono,monospace;font-size:12px;white-space:pre-wrap}
.bar{background:#d62728;height:12px;display:inline-block;vertical-align:middle;margin-right:6px}
.split{display:inline-flex;width:240px;height:12px;vertical-align:middle;margin-right:6px;border:1px solid #bbb}
.split span{height:100%}.split .busy{background:#2ca02c}.split .syncs{background:#d62728}
.split .host{background:#ff7f0e}.split .unexplained{background:#999}
#tip{position:absolute;display:none;background:#fff;border:1px solid #888;padding:4px 8px;font-size:12px;
pointer-events:none;white-space:pre;box-shadow:0 1px 4px rgba(0,0,0,.2)}
button{font-size:12px;margin:0 0 6px}code{font-size:12px}
)CSS";

inline constexpr const char* kPageScript = R"JS(
(function () {
  var D = JSON.parse(document.getElementById('cudashim-data').textContent);
  var NS = 'http://www.w3.org/2000/svg';
  var W = 1100, H = 340, L = 84, R = 20, T = 14, B = 40;
  var colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function nice(v) {  // a round step near v/5
    var s = Math.pow(10, Math.floor(Math.log10(v / 5))), m = v / 5 / s;
    return s * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
  }
  function valueAt(pts, t) {  // a step chart: the last sample at or before t
    var v = null;
    for (var i = 0; i < pts.length && pts[i][0] <= t; i++) v = pts[i][1];
    return v;
  }
  var box = document.getElementById('memchart');
  var series = D.memory || [];
  if (box && series.length) {
    var tmax = 0, ymax = 0;
    series.forEach(function (s) {
      s.points.forEach(function (p) { tmax = Math.max(tmax, p[0]); ymax = Math.max(ymax, p[1]); });
      ymax = Math.max(ymax, s.peak_mib || 0);
    });
    tmax = Math.max(tmax, 1e-3); ymax = Math.max(ymax * 1.08, 1);
    var view = [0, tmax];
    var svg = el('svg', {id: 'memsvg', width: W, height: H + 22 * series.length + 10, role: 'img',
                         'aria-label': 'device memory over time', 'data-ymax-mib': ymax.toFixed(1),
                         'data-tmax': tmax.toFixed(3)}, box);
    var tip = document.getElementById('tip');
    var drag = null, sel = null;
    function X(t) { return L + (W - L - R) * (t - view[0]) / (view[1] - view[0]); }
    function Y(v) { return H - B - (H - B - T) * v / ymax; }
    function draw() {
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      var clip = el('clipPath', {id: 'plotclip'}, el('defs', {}, svg));
      el('rect', {x: L, y: 0, width: W - L - R, height: H - B + 1}, clip);
      var ys = nice(ymax);
      for (var v = 0; v <= ymax; v += ys) {
        el('line', {x1: L, x2: W - R, y1: Y(v), y2: Y(v), stroke: '#e6e6e6'}, svg);
        el('text', {x: L - 6, y: Y(v) + 4, 'font-size': 11, 'text-anchor': 'end'}, svg).textContent = v.toFixed(ys < 1 ? 1 : 0) + ' MiB';
      }
      var span = view[1] - view[0], xs = nice(span);
      for (var t = Math.ceil(view[0] / xs) * xs; t <= view[1] + 1e-9; t += xs) {
        el('line', {x1: X(t), x2: X(t), y1: H - B, y2: H - B + 4, stroke: '#333'}, svg);
        el('text', {x: X(t), y: H - B + 17, 'font-size': 11, 'text-anchor': 'middle'}, svg).textContent =
          (xs < 0.01 ? t.toFixed(3) : xs < 1 ? t.toFixed(2) : t.toFixed(0)) + ' s';
      }
      el('line', {x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: '#333'}, svg);
      el('line', {x1: L, x2: L, y1: T, y2: H - B, stroke: '#333'}, svg);
      var labelled = [];  // peak labels already drawn (their y), so that equal peaks do not overprint
      var digits = tmax < 10 ? 3 : 1;
      series.forEach(function (s, k) {
        var c = colors[k % colors.length], d = '';
        s.points.forEach(function (p, i) {
          d += i === 0 ? 'M' + X(p[0]).toFixed(1) + ',' + Y(p[1]).toFixed(1)
                       : ' H' + X(p[0]).toFixed(1) + ' V' + Y(p[1]).toFixed(1);
        });
        el('path', {d: d, fill: 'none', stroke: c, 'stroke-width': 2, 'clip-path': 'url(#plotclip)', 'class': 'step',
                    'data-series': s.label}, svg);
        if (s.peak_mib) {
          el('line', {x1: L, x2: W - R, y1: Y(s.peak_mib), y2: Y(s.peak_mib), stroke: c, 'stroke-dasharray': '5,4',
                      'class': 'peak', 'data-peak-mib': s.peak_mib.toFixed(1)}, svg);
          if (s.peak_window) {
            var a = Math.max(X(s.peak_window[0]), L), b = Math.min(X(s.peak_window[1]), W - R);
            if (b > a) el('rect', {x: a, y: Y(s.peak_mib) - 5, width: Math.max(b - a, 2), height: 10, fill: c,
                                   opacity: 0.35, 'class': 'peak-window'}, svg);
          }
          var ly = Y(s.peak_mib) - 6;
          while (labelled.some(function (y) { return Math.abs(y - ly) < 14; })) ly -= 14;
          labelled.push(ly);
          var lab = el('text', {x: W - R - 4, y: ly, 'font-size': 12, fill: c, 'text-anchor': 'end',
                                'class': 'peak-label'}, svg);
          lab.textContent = s.label + ': peak ' + s.peak_mib.toFixed(1) + ' MiB' + (s.peak_window ? ', reached between ' +
            s.peak_window[0].toFixed(digits) + ' s and ' + s.peak_window[1].toFixed(digits) + ' s' : '');
        }
        el('text', {x: L, y: H + 12 + 22 * k, 'font-size': 12, fill: c}, svg).textContent = '\u25A0 ' + s.label;
      });
      sel = el('rect', {x: 0, y: T, width: 0, height: H - B - T, fill: '#1f77b4', opacity: 0.15, display: 'none'}, svg);
      el('rect', {x: L, y: T, width: W - L - R, height: H - B - T, fill: 'transparent', id: 'memhit'}, svg);
      svg.setAttribute('data-view', view[0].toFixed(3) + ',' + view[1].toFixed(3));
      (window.cudashimOnView || []).forEach(function (f) { f(view); });  // charts on the same axis (html_gpu_health.cpp)
    }
    function timeOf(ev) {
      var r = svg.getBoundingClientRect(), x = ev.clientX - r.left;
      return view[0] + (view[1] - view[0]) * (x - L) / (W - L - R);
    }
    svg.addEventListener('mousemove', function (ev) {
      var t = timeOf(ev);
      if (drag !== null) {
        var a = Math.min(X(drag), X(t)), b = Math.max(X(drag), X(t));
        sel.setAttribute('x', a); sel.setAttribute('width', b - a); sel.setAttribute('display', 'inline');
      }
      if (t < view[0] || t > view[1]) { tip.style.display = 'none'; return; }
      var lines = [t.toFixed(3) + ' s'];
      series.forEach(function (s) {
        var v = valueAt(s.points, t);
        lines.push(s.label + ': ' + (v === null ? 'no sample yet' : v.toFixed(1) + ' MiB'));
      });
      tip.textContent = lines.join('\n');
      tip.style.display = 'block';
      tip.style.left = (ev.pageX + 14) + 'px'; tip.style.top = (ev.pageY + 10) + 'px';
    });
    svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
    svg.addEventListener('mousedown', function (ev) { drag = timeOf(ev); ev.preventDefault(); });
    svg.addEventListener('mouseup', function (ev) {
      if (drag === null) return;
      var a = Math.max(Math.min(drag, timeOf(ev)), 0), b = Math.min(Math.max(drag, timeOf(ev)), tmax);
      drag = null;
      if (b - a > (view[1] - view[0]) / 200) { view = [a, b]; draw(); } else sel.setAttribute('display', 'none');
    });
    function reset() { view = [0, tmax]; draw(); }
    svg.addEventListener('dblclick', reset);
    var btn = document.getElementById('memreset');
    if (btn) btn.addEventListener('click', reset);
    window.cudashimZoom = function (a, b) { view = [a, b]; draw(); };  // for the console
    draw();
    var z = /zoom=([0-9.]+),([0-9.]+)/.exec(location.hash);  // page.html#zoom=A,B opens zoomed
    if (z && +z[2] > +z[1]) window.cudashimZoom(+z[1], +z[2]);
  }
  var rows = document.querySelectorAll('tr.site');
  for (var i = 0; i < rows.length; i++)
    rows[i].addEventListener('click', function () {
      var next = this.nextElementSibling;
      if (next && next.classList.contains('stacks')) next.hidden = !next.hidden;
    });
  document.body.setAttribute('data-rendered', 'yes');
})();
)JS";

}  // namespace cudashim::tools
