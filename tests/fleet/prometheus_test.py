#!/usr/bin/env python3
"""prometheus_test.py CLI SHIM FAKECUDA_DIR SYNC_RULES PROM_BIN_DIR [PLOT_JSON]: the fleet view end to end.

A real Prometheus (Debian's package, scripts/setup.sh --tests) scrapes `cudashim exporter` on
loopback every second while test-double programs run under the shim; the series read back
through Prometheus's own query API (/api/v1/query) must equal what each program's own JSON
report says: its findings' calls and blocked time, its out-of-memory results and cap denials,
its peak device memory and cap, its Slurm job and rank. One job runs long enough (150 ms syncs)
that Prometheus must see it running (cudashim_process_running 1) before it ends. A process that
never calls CUDA publishes nothing. `promtool check metrics` validates the exposition (its only complaint may be
the camelCase of dcgm-exporter's own label names, UUID, modelName and Hostname, kept so that
dashboards join; renamed, it must pass clean). PLOT_JSON, when given, receives the query
results docs/fleet.md's figure is drawn from (tests/fleet/render_dashboard.py).
Exit 77 (skipped) when Prometheus is not installed.
"""
import glob
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

DELAY_US = 300


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(port, q):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]


def start_job(shim, fake, prog, mode, fleet, out, env_extra, delay_us=DELAY_US):
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_FLEET_DIR=fleet,
               CUDASHIM_SUMMARY="0", FAKECUDA_SYNC_DELAY_US=str(delay_us), **env_extra)
    for k in ("SLURM_JOB_ID", "SLURM_STEP_ID", "RANK", "LOCAL_RANK", "SLURM_PROCID", "POD_NAME", "POD_NAMESPACE"):
        if k not in env_extra:
            env.pop(k, None)
    return subprocess.Popen([prog, mode], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_job(shim, fake, prog, mode, fleet, out, env_extra, started=None):
    p = started or start_job(shim, fake, prog, mode, fleet, out, env_extra)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, f"{mode}: exit {p.returncode}: {err[-800:]}"
    reps = [f for f in glob.glob(os.path.join(out, "cudashim-*.json")) if re.search(rf"-{p.pid}(-r\d+)?\.json$", f)]
    assert len(reps) == 1, f"{mode}: reports {reps}"
    return p.pid, json.load(open(reps[0]))


def wait_for(port, q, want, deadline):
    while time.time() < deadline:
        try:
            res = query(port, q)
            if len(res) >= want:
                return res
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"Prometheus never returned {want} series for {q}")


def check_promtool(promtool, exposition, errors):
    p = subprocess.run([promtool, "check", "metrics"], input=exposition, capture_output=True, text=True)
    complaints = [l for l in (p.stdout + p.stderr).splitlines() if l.strip()]
    other = [l for l in complaints if "label names should be written in 'snake_case' not 'camelCase'" not in l]
    if other:
        errors.append(f"promtool check metrics: {other}")
    renamed = re.sub(r"\b(UUID|modelName|Hostname)=", lambda m: {"UUID": "uuid", "modelName": "model_name",
                                                                   "Hostname": "hostname"}[m.group(1)] + "=", exposition)
    p = subprocess.run([promtool, "check", "metrics"], input=renamed, capture_output=True, text=True)
    if p.returncode != 0:
        errors.append(f"promtool check metrics (dcgm labels renamed): exit {p.returncode}: {p.stdout}{p.stderr}")


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def compare(port, job, pid, rep, errors):
    sel = f'pid="{pid}"'
    for f in rep["findings"]:
        got = query(port, f'cudashim_finding_calls{{{sel},finding="{f["id"]}"}}')
        if len(got) != 1 or int(float(got[0]["value"][1])) != f["count"]:
            errors.append(f"{job}: {f['id']} calls: Prometheus {got}, report {f['count']}")
        got = query(port, f'cudashim_finding_blocked_seconds{{{sel},finding="{f["id"]}"}}')
        if len(got) != 1 or not close(float(got[0]["value"][1]), f["blocked_ns"] / 1e9):
            errors.append(f"{job}: {f['id']} blocked: Prometheus {got}, report {f['blocked_ns']} ns")
    for metric, want in (("cudashim_ooms_total", rep["oom"]["count"]),
                         ("cudashim_cap_denials_total", rep["oom"]["denied_by_policy"]),
                         ("cudashim_blocked_seconds_total", None)):
        got = query(port, f"{metric}{{{sel}}}")
        if len(got) != 1:
            errors.append(f"{job}: {metric}: {got}")
        elif want is not None and float(got[0]["value"][1]) != want:
            errors.append(f"{job}: {metric} = {got[0]['value'][1]}, report {want}")
    for d in rep["memory"]["devices"]:
        got = query(port, f'cudashim_gpu_memory_peak_bytes{{{sel},cuda_device="{d["device"]}"}}')
        if len(got) != 1 or int(got[0]["value"][1]) != d["peak_bytes"]:
            errors.append(f"{job}: device {d['device']} peak: Prometheus {got}, report {d['peak_bytes']}")
    got = query(port, f"cudashim_process_running{{{sel}}}")
    if len(got) != 1 or got[0]["value"][1] != "0":
        errors.append(f"{job}: process_running {got}, expected 0 (ended)")


def main():
    cli, shim, fake, prog, prom_dir = (os.path.abspath(a) for a in sys.argv[1:6])
    plot_json = sys.argv[6] if len(sys.argv) > 6 else None
    prometheus, promtool = os.path.join(prom_dir, "prometheus"), os.path.join(prom_dir, "promtool")
    if not os.access(prometheus, os.X_OK):
        print(f"SKIP: {prometheus} is not installed (scripts/setup.sh --tests)")
        return 77
    errors = []
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        fleet, out, textfile, tsdb = (os.path.join(tmp, n) for n in ("fleet", "out", "textfile", "tsdb"))
        for d in (fleet, out, textfile):
            os.mkdir(d)
        try:
            exp = subprocess.Popen([cli, "exporter", "--dir", fleet, "--listen", "127.0.0.1", "--port", "0",
                                    "--textfile", textfile, "--keep-exited", "600"],
                                   stderr=subprocess.PIPE, text=True)
            procs.append(exp)
            line = exp.stderr.readline()
            m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", line)
            assert m, f"exporter said: {line!r}"
            exp_port = int(m.group(1))
            prom_port = free_port()
            cfg = os.path.join(tmp, "prometheus.yml")
            with open(cfg, "w") as f:
                f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
                        f"  - job_name: cudashim\n    static_configs:\n      - targets: ['127.0.0.1:{exp_port}']\n")
            log = open(os.path.join(tmp, "prometheus.log"), "w")
            procs.append(subprocess.Popen([prometheus, f"--config.file={cfg}", f"--storage.tsdb.path={tsdb}",
                                           f"--web.listen-address=127.0.0.1:{prom_port}"], stdout=log, stderr=log))
            # a live job: its syncs take 150 ms each (40 steps, about 6 s), so Prometheus
            # scrapes its record while it runs (cudashim_process_running 1, calls growing)
            live = start_job(shim, fake, prog, "readback", fleet, out, {"SLURM_JOB_ID": "live"}, delay_us=150000)
            # the jobs: a scalar read-back loop (Slurm job 4711, rank 1), a cap hit (job 4712),
            # and a process that never calls CUDA (no record)
            jobs = {
                "readback": run_job(shim, fake, prog, "readback", fleet, out,
                                    {"SLURM_JOB_ID": "4711", "SLURM_STEP_ID": "0", "RANK": "1"}),
                "churn_after_oom": run_job(shim, fake, prog, "churn_after_oom", fleet, out,
                                           {"SLURM_JOB_ID": "4712", "CUDASHIM_MEM_CAP": "10MiB"}),
            }
            subprocess.run(["/bin/true"], env=dict(os.environ, LD_PRELOAD=shim, CUDASHIM_FLEET_DIR=fleet), check=True)
            running = wait_for(prom_port, 'cudashim_process_running{slurm_job_id="live"} == 1', 1, time.time() + 30)
            if live.poll() is not None:
                errors.append("the live job ended before Prometheus saw it running: the test proves nothing live")
            elif running[0]["metric"]["pid"] != str(live.pid):
                errors.append(f"the running series is not the live job's: {running}")
            jobs["live"] = run_job(shim, fake, prog, "readback", fleet, out, {}, started=live)
            records = sorted(os.listdir(fleet))
            if len(records) != 3:
                errors.append(f"runtime folder holds {records}, expected one record per CUDA process (3)")
            wait_for(prom_port, 'cudashim_process_running{slurm_job_id=~"4711|4712|live"} == 0', 3, time.time() + 30)
            for job, (pid, rep) in jobs.items():
                compare(prom_port, job, pid, rep, errors)
            got = query(prom_port, 'cudashim_finding_calls{slurm_job_id="4711",finding="sync.scalar-readback"}')
            if len(got) != 1 or got[0]["metric"].get("rank") != "1" or got[0]["metric"].get("slurm_step") != "0":
                errors.append(f"the Slurm job's labels: {got}")
            got = query(prom_port, 'cudashim_cap_denials_total{slurm_job_id="4712"}')
            if len(got) != 1 or got[0]["value"][1] != "1":
                errors.append(f"job 4712's cap denial: {got}")
            exposition = urllib.request.urlopen(f"http://127.0.0.1:{exp_port}/metrics", timeout=5).read().decode()
            check_promtool(promtool, exposition, errors)
            if plot_json:
                plots = {q: query(prom_port, q) for q in (
                    "cudashim_finding_blocked_seconds", "cudashim_finding_calls", "cudashim_blocked_seconds_total",
                    "cudashim_process_wall_seconds", "cudashim_cap_denials_total", "cudashim_ooms_total",
                    "cudashim_gpu_memory_peak_bytes", "cudashim_gpu_memory_cap_bytes", "cudashim_library_findings",
                    "cudashim_gpu_idle_share")}
                with open(plot_json, "w") as f:
                    json.dump(plots, f, indent=1)
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        if exp.returncode != 0:
            errors.append(f"the exporter ended with {exp.returncode} after SIGTERM")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"ok: Prometheus read {len(jobs)} jobs' series through /api/v1/query, equal to their reports")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
