#!/usr/bin/env python3
"""costmodel.py SHIM OUTDIR BENCH_OUTPUT: what cudashim adds to a training step, from its own
counters and the per-call cost measured on this host's CPU, not from step-time differences
(which vary 5-9% between processes on this host).

For each model of bench/gpu_train_step.py, two runs under the full shim (call sites, sync
rules, inventory, a non-binding cap): N1 and N2 measured steps. The difference of their
reports' per-ABI call counts, divided by N2 - N1, is the hooked calls of one steady-state
step (warm-up and start-up cancel). Each call is priced by its class, from
bench_hook_overhead run on this host (BENCH_OUTPUT): launch-class (pass-through),
timed/blocking, alloc+free. Calls that go to a call site in a Python process also read the
Python frame: priced at PY_SITE_NS (an assumed upper bound, stated in the table).
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
STEP = os.path.join(HERE, "..", "bench", "gpu_train_step.py")
N1, N2 = 30, 130
PY_SITE_NS = float(os.environ.get("PY_SITE_NS", "2000"))

shim, outdir, bench_out = sys.argv[1:4]
text = open(bench_out).read()
cost = {}
for key, label in (("launch", "pass-through launch"), ("sync", "timed sync"), ("alloc", "alloc+free pair")):
    m = re.search(r"\| " + re.escape(label) + r"[^|]*\|[^|]*\|[^|]*\|[^|]*\|\s*([\d.]+)\s*\|", text)
    cost[key] = float(m.group(1)) if m else float("nan")


def run(model, steps):
    out = tempfile.mkdtemp()
    env = dict(os.environ, LD_PRELOAD=shim, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="error", CUDASHIM_MEM_CAP="100GiB")
    p = subprocess.run([sys.executable, STEP, model, str(steps)], env=env, capture_output=True, text=True, timeout=200)
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
    rep = max(reps, key=lambda r: sum(a["calls"] for a in r["api"].values()))
    return json.loads(line)["median_ms"], rep


rows = ["| model | step ms | hooked calls per step (driver + runtime rows) | of which blocking/timed | alloc+free pairs | "
        "estimated added us per step | share of the step |", "|---|---:|---:|---:|---:|---:|---:|"]
detail = []
for model in ("transformer", "cnn"):
    ms1, r1 = run(model, N1)
    ms2, r2 = run(model, N2)
    per = {}
    for abi, a in r2["api"].items():
        d = (a["calls"] - r1["api"].get(abi, {}).get("calls", 0)) / (N2 - N1)
        if d > 0:
            per[abi] = (d, a)
    total = sum(d for d, _ in per.values())
    timed = sum(d for d, a in per.values() if a.get("family") in ("sync",) or a.get("blocked_ns", 0) > 0 or a.get("time_ns", 0) > 0)
    allocs = sum(d for abi, (d, a) in per.items() if abi in ("cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocFromPoolAsync"))
    frees = sum(d for abi, (d, a) in per.items() if abi in ("cuMemFree_v2", "cuMemFreeAsync"))
    pairs = max(allocs, frees)
    plain = total - timed - 2 * pairs
    added_ns = plain * cost["launch"] + timed * (cost["sync"] + PY_SITE_NS) + pairs * (cost["alloc"] + 2 * PY_SITE_NS)
    rows.append(f"| {model} | {ms2:.2f} | {total:.1f} | {timed:.1f} | {pairs:.2f} | {added_ns / 1e3:.2f} | "
                f"{added_ns / 1e6 / ms2 * 100:.3f}% |")
    top = sorted(per.items(), key=lambda kv: -kv[1][0])[:12]
    detail.append(f"- {model}: " + ", ".join(f"{abi} {d:.1f}" for abi, (d, a) in top))
res = "\n".join([
    "# What cudashim adds to a training step, from its counters and this host's per-call costs",
    "",
    f"- per-call costs measured on this host (bench_hook_overhead, test-double driver): launch-class {cost['launch']} ns, "
    f"timed/blocking {cost['sync']} ns, alloc+free pair {cost['alloc']} ns; Python frame read at a call site priced at "
    f"{PY_SITE_NS:.0f} ns ({os.environ.get('PY_SITE_SOURCE', 'an assumed upper bound, not measured here')})",
    f"- calls per step: report of a {N2}-step run minus a {N1}-step run, over {N2 - N1} steps (full mode: call sites, "
    "sync rules, inventory, CUDASHIM_MEM_CAP=100GiB)",
    "- command: `bash gpu/run_costmodel.sh`", "", *rows, "", "Hooked calls per step, the most frequent ABIs:", *detail, ""])
open(os.path.join(outdir, "results-costmodel.md"), "w").write(res)
print(res)
