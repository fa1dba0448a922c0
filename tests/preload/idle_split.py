#!/usr/bin/env python3
"""idle_split.py SHIM FAKECUDA_DIR GPU_TIME FAKECUPTI CLI: the GPU-idle diagnosis decided from a
split that adds up (issue 36), for the three shapes of the issue through the test doubles. The
precise mode (CUPTI double) gives the GPU's busy time from the kernels the fake driver ran
(FAKECUDA_KERNEL_US each); the shim measures the idle after each drain itself.

1. split_sync: 2 x 5 ms kernels, cudaDeviceSynchronize, 8 ms of host work: sync-bound, most
   of the idle after syncs.
2. split_launch: 200 x 20 us kernels a step, 50 us of host time after each launch, a 4-byte
   read-back: launch-bound, the read-back's part under 5 points, ~200 kernels a step.
3. split_input: 6 x 1 ms kernels and a read-back mid-step, then 12 ms of batch preparation:
   input-bound, the read-back's part under 5 points.
Each: the split adds up to the idle, the diagnosis is its largest part (the GPU step's own check,
gpu/realworld/idle_compare.py contradiction(), which is first shown to catch the issue's case), the gpu.idle finding's
message is the device's summary line; `cudashim report` prints that line and the step's bar; the
page (`--html`) draws the split as a bar of the step with the same shares, and each finding's
blocked bar against the process's wall time (a read-back of 0.02 % of the run: 1 px of 120).
"""
import glob
import json
import re
import os
import subprocess
import sys
import tempfile

shim, fake, prog, fakecupti, cli = sys.argv[1:6]
major = fakecupti.rsplit(".so.", 1)[1].split(".")[0]
errors = []
home = tempfile.mkdtemp()
os.makedirs(os.path.join(home, "extras", "CUPTI", "lib64"))
os.symlink(fakecupti, os.path.join(home, "extras", "CUPTI", "lib64", f"libcupti.so.{major}"))
env0 = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_LOG_LEVEL="warn", CUDASHIM_GPU_PRECISE="1",
            CUDA_HOME=home, GPU_TIME_SECONDS="3")
for k in list(env0):
    if k == "CUDA_INJECTION64_PATH" or k.startswith(("NSYS_", "NSIGHT_")):
        del env0[k]

# The GPU step's check (gpu/run_after_merge.sh idlesplit), tested here on the doubles' reports.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gpu", "realworld"))
from idle_compare import contradiction  # noqa: E402

# The check itself catches a contradiction (a fixture: the report, sync-bound at 2 points).
if contradiction({"diagnosis": "sync-bound", "idle_split": {"idle": 0.63, "after_syncs": 0.02, "host_between": 0.61,
                                                             "unexplained": 0.0}}) is None:
    errors.append("contradiction() passed sync-bound with 2 points after syncs and 61 host between")
if contradiction({"diagnosis": "launch-bound", "idle_split": {"idle": 0.63, "after_syncs": 0.02, "host_between": 0.5,
                                                               "unexplained": 0.0}}) is None:
    errors.append("contradiction() passed a split that does not add up")


def run(mode, kernel_us, want, check):
    out = tempfile.mkdtemp()
    p = subprocess.run([prog, mode], env=dict(env0, CUDASHIM_OUT=out, FAKECUDA_KERNEL_US=str(kernel_us)),
                       capture_output=True, text=True, timeout=60)
    reports = [f for f in glob.glob(os.path.join(out, "*.json")) if not f.endswith("-crash.json")]
    if p.returncode != 0 or not reports:
        errors.append(f"{mode}: exit {p.returncode}, {len(reports)} report(s): {p.stderr[-400:]}")
        return
    r = json.load(open(reports[0]))
    g = r["gpu_time"]
    if not g["devices"]:
        errors.append(f"{mode}: no device in gpu_time: {g['precise']}")
        return
    d = g["devices"][0]
    s = d.get("idle_split") or {}
    print(f"{mode}: {d['diagnosis']} from {d['diagnosis_from']}: {d.get('summary')}")
    why = contradiction(d)
    if why:
        errors.append(f"{mode}: {why}")
    if d["diagnosis"] != want:
        errors.append(f"{mode}: diagnosis {d['diagnosis']}, want {want}; evidence {d['evidence']}")
    idle = [f for f in g["findings"] if f["id"] == "gpu.idle"]
    if len(idle) != 1 or idle[0]["message"] != d["summary"] or idle[0]["diagnosis"] != want:
        errors.append(f"{mode}: gpu.idle findings {idle}, summary {d.get('summary')}")
    problem = check(s)
    if problem:
        errors.append(f"{mode}: {problem}: {s}")
    # The exit summary renders the same line (not re-decided), with the step's bar.
    if d["summary"] not in p.stderr or "the steady state [" not in p.stderr:
        errors.append(f"{mode}: the exit summary lacks the summary line or the bar: {p.stderr[-600:]}")
    c = subprocess.run([cli, "report", reports[0]], capture_output=True, text=True, timeout=60)
    if d["summary"] not in c.stdout or "the steady state [" not in c.stdout:
        errors.append(f"{mode}: `cudashim report` lacks the summary line or the bar: {c.stdout[-800:]}")
    page = os.path.join(out, "page.html")
    subprocess.run([cli, "report", "--html", page, reports[0]], capture_output=True, text=True, timeout=60)
    html = open(page).read() if os.path.exists(page) else ""
    m = re.search(r'class="idle-split" data-after-syncs="([0-9.]+)" data-host-between="([0-9.]+)"', html)
    if not m or abs(float(m.group(1)) - s["after_syncs"]) > 1e-3 or abs(float(m.group(2)) - s["host_between"]) > 1e-3:
        errors.append(f"{mode}: the page's split bar {m.groups() if m else None} is not the report's {s}")
    bars = re.findall(r'class="bar" style="width:([0-9]+)px" title="([0-9.]+)% of the wall time"', html)
    if not bars:
        errors.append(f"{mode}: no blocked bar on the page")
    for w, title in re.findall(r'class="bar" style="width:([0-9]+)px" title="([0-9.]+)% of the wall time"', html):
        if int(w) > max(1, round(1.2 * float(title)) + 1):
            errors.append(f"{mode}: a blocked bar {w}px for {title}% of the wall time (120 px is the wall)")


run("split_sync", 5000, "sync-bound",
    lambda s: None if s.get("after_syncs", 0) > 0.25 and s["after_syncs"] > 2 * s["host_between"] else "syncs not the largest")
run("split_launch", 20, "launch-bound",
    lambda s: None if s.get("after_syncs", 1) < 0.05 and s["host_between"] > 0.3 and 150 <= s["launches_per_step"] <= 210
    else "not mostly the host between launches, ~200 a step")
run("split_input", 1000, "input-bound",
    lambda s: None if s.get("after_syncs", 1) < 0.05 and s["host_between"] > 0.3 and s["host_ns_per_launch"] > 200000
    else "not mostly the host's batch preparation")

for e in errors:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
