#!/usr/bin/env python3
"""fleet_table.py --prometheus URL --out DIR FORM...: what Prometheus returned for each job, beside its report.

For each FORM (a job run with SLURM_JOB_ID=fleet-FORM, its report under DIR/FORM/), queries
Prometheus's /api/v1/query for the GPU idle share (with its diagnosis label), the findings'
calls and blocked seconds, the blocked time and peak memory, and writes DIR/prometheus.json
(every query's answer) and DIR/table.md (Prometheus's value beside the report's). Exit 1 when
a job has no series, or a finding's values differ from its report's.
"""
import argparse
import glob
import json
import os
import sys
import time
import urllib.parse
import urllib.request

QUERIES = ("cudashim_gpu_idle_share", "cudashim_gpu_busy_share", "cudashim_finding_calls",
           "cudashim_finding_blocked_seconds", "cudashim_blocked_seconds_total", "cudashim_gpu_memory_peak_bytes",
           "cudashim_process_wall_seconds", "cudashim_process_ended_by_signal")


def query(base, q):
    with urllib.request.urlopen(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": q}), timeout=10) as r:
        body = json.load(r)
    return body["data"]["result"] if body.get("status") == "success" else []


def reports(folder):
    out = {}
    for f in glob.glob(os.path.join(folder, "**", "cudashim-*.json"), recursive=True):
        try:
            r = json.load(open(f))
            out[str(r["process"]["pid"])] = r
        except (OSError, ValueError, KeyError):
            pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prometheus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("forms", nargs="+")
    a = ap.parse_args()
    # Prometheus has scraped the jobs' last records once each form has series and none runs
    deadline = time.time() + 40
    while time.time() < deadline:
        try:
            running = query(a.prometheus, 'cudashim_process_running{slurm_job_id=~"fleet-.*"}')
        except OSError:
            running = []
        forms = {r["metric"].get("slurm_job_id") for r in running}
        if all(f"fleet-{f}" in forms for f in a.forms) and all(r["value"][1] == "0" for r in running):
            break
        time.sleep(1)
    answers = {q: query(a.prometheus, f'{q}{{slurm_job_id=~"fleet-.*"}}') for q in QUERIES}
    json.dump(answers, open(os.path.join(a.out, "prometheus.json"), "w"), indent=1)
    lines, bad = ["# Fleet view on the GPU host: Prometheus's answers beside each job's report", ""], []
    for form in a.forms:
        reps = reports(os.path.join(a.out, form))
        mine = lambda q: [r for r in answers[q] if r["metric"].get("slurm_job_id") == f"fleet-{form}"]
        pids = sorted({r["metric"]["pid"] for r in mine("cudashim_blocked_seconds_total")})
        lines += [f"## {form}", ""]
        if not pids:
            bad.append(f"{form}: no series in Prometheus")
            lines += ["no series", ""]
            continue
        for pid in pids:
            rep = reps.get(pid)
            lines.append(f"pid {pid} ({next(r['metric']['exe'] for r in mine('cudashim_blocked_seconds_total') if r['metric']['pid'] == pid)}), "
                         f"report: {'yes' if rep else 'none (a process without a report: a worker that made no CUDA call?)'}")
            lines += ["", "| what | Prometheus | report |", "|---|---|---|"]
            for r in mine("cudashim_gpu_idle_share"):
                if r["metric"]["pid"] != pid:
                    continue
                dev = next((d for d in (rep or {}).get("gpu_time", {}).get("devices", [])
                            if str(d.get("device")) == r["metric"].get("cuda_device")), {})
                steady = dev.get("steady") or {}
                rep_idle = f"{1 - steady['busy']:.3f} ({dev.get('diagnosis')})" if "busy" in steady else f"- ({dev.get('diagnosis', '-')})"
                lines.append(f"| GPU {r['metric'].get('gpu')} idle share (diagnosis) | {float(r['value'][1]):.3f} "
                             f"({r['metric'].get('diagnosis')}) | {rep_idle} |")
            for r in mine("cudashim_finding_calls"):
                if r["metric"]["pid"] != pid:
                    continue
                fid = r["metric"]["finding"]
                blocked = next((float(b["value"][1]) for b in mine("cudashim_finding_blocked_seconds")
                                if b["metric"]["pid"] == pid and b["metric"]["finding"] == fid), 0.0)
                rf = next((f for f in (rep or {}).get("findings", []) if f["id"] == fid), None)
                rep_text = f"{rf['count']} calls, {rf['blocked_ns'] / 1e9:.4f} s" if rf else "-"
                lines.append(f"| {fid} ({r['metric']['severity']}) | {int(float(r['value'][1]))} calls, {blocked:.4f} s | {rep_text} |")
                if rf and (rf["count"] != int(float(r["value"][1])) or abs(rf["blocked_ns"] / 1e9 - blocked) > 1e-6):
                    bad.append(f"{form} pid {pid}: {fid}: Prometheus {r['value'][1]} calls, {blocked} s; report {rf['count']}, {rf['blocked_ns']} ns")
            for q, label in (("cudashim_blocked_seconds_total", "blocked (s)"), ("cudashim_process_wall_seconds", "wall (s)")):
                for r in mine(q):
                    if r["metric"]["pid"] == pid:
                        theirs = (rep or {}).get("blocking", {}).get("blocked_ns") if q.startswith("cudashim_blocked") else None
                        lines.append(f"| {label} | {float(r['value'][1]):.3f} | {'-' if theirs is None else f'{theirs / 1e9:.3f}'} |")
            lines.append("")
    lines += ["Problems: " + ("; ".join(bad) if bad else "none"), ""]
    open(os.path.join(a.out, "table.md"), "w").write("\n".join(lines))
    print("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
