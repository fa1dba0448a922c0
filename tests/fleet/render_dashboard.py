#!/usr/bin/env python3
"""render_dashboard.py PLOTS_JSON OUT_PNG: docs/fleet.md's figure, drawn from what Prometheus returned.

PLOTS_JSON is what tests/fleet/prometheus_test.py wrote (its 6th argument): the /api/v1/query
results of the series deploy/fleet/grafana-dashboard.json's panels read. This draws the same
panels as plain SVG bars in one HTML page and screenshots it with headless Chromium (Grafana is
not installable here); every number on it is a value Prometheus returned.
"""
import html
import json
import shutil
import subprocess
import sys
import tempfile


def who(m):
    job = m.get("slurm_job_id") or m.get("pod") or m.get("exe", "?")
    return f"job {job} (pid {m.get('pid', '?')})"


def bars(title, rows, unit):
    rows = sorted(rows, key=lambda r: -r[1])[:10]
    top = max([v for _, v in rows] + [1e-12])
    out = [f"<div class=panel><h2>{html.escape(title)}</h2>"]
    if not rows:
        out.append("<p class=none>no series (yet)</p>")
    for label, v in rows:
        w = 220 * v / top
        out.append(f"<div class=row><span class=l>{html.escape(label)}</span><svg width=225 height=16>"
                   f"<rect width={w:.1f} height=14 fill='#3274d9'/></svg><span class=v>{v:g} {unit}</span></div>")
    out.append("</div>")
    return "".join(out)


def by_node(results):
    """sum by (Hostname), as the dashboard's query."""
    out = {}
    for r in results:
        host = r["metric"].get("Hostname", "?")
        out[host] = out.get(host, 0.0) + float(r["value"][1])
    return out


def main():
    plots = json.load(open(sys.argv[1]))
    val = lambda r: float(r["value"][1])
    panels = [
        bars("GPU idle share by job, and why", [(f"{who(r['metric'])} {r['metric'].get('diagnosis', '')}", val(r))
                                                 for r in plots.get("cudashim_gpu_idle_share", [])], ""),
        bars("Top findings by blocked time", [(f"{r['metric']['finding']} ({r['metric']['severity']}), {who(r['metric'])}",
                                               val(r)) for r in plots["cudashim_finding_blocked_seconds"]], "s"),
        bars("Memory caps hit", [(who(r["metric"]), val(r)) for r in plots["cudashim_cap_denials_total"]], ""),
        bars("Library mismatches by node", list(by_node(plots["cudashim_library_findings"]).items()), ""),
        bars("Blocked in CUDA calls, by job", [(who(r["metric"]), val(r))
                                               for r in plots["cudashim_blocked_seconds_total"]], "s"),
        bars("Peak device memory, by job", [(f"{who(r['metric'])} gpu {r['metric'].get('gpu')}", val(r) / 2**20)
                                            for r in plots["cudashim_gpu_memory_peak_bytes"]], "MiB"),
    ]
    page = ("<!doctype html><meta charset=utf-8><style>body{font:13px sans-serif;background:#111217;color:#ccccdc;margin:12px}"
            "h1{font-size:16px}.grid{display:grid;grid-template-columns:1fr 1fr;gap:10px}"
            ".panel{background:#181b1f;border:1px solid #2c3235;padding:8px}h2{font-size:13px;margin:0 0 6px}"
            ".row{display:flex;align-items:center;gap:6px;margin:2px 0}.l{width:340px;overflow:hidden;white-space:nowrap}"
            ".v{width:110px}.none{color:#777}</style>"
            "<h1>cudashim fleet: per-job GPU truth (deploy/fleet/grafana-dashboard.json's panels, from Prometheus's "
            "/api/v1/query in fleet.prometheus)</h1><div class=grid>" + "".join(panels) + "</div>")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/dash.html"
        open(path, "w").write(page)
        subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--screenshot={sys.argv[2]}", "--window-size=1500,330", f"file://{path}"],
                       check=True, capture_output=True, timeout=120)


if __name__ == "__main__":
    main()
