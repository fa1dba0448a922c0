#!/usr/bin/env python3
"""gpu_time.py SHIM FAKECUDA_DIR PROG: GPU time and health from NVML, through the NVML double.

1. host_bound at 20 % utilization: the sampler read the double's samples, on the flush thread
   only (no NVML call from a program thread, hence none on a hook's path);
   the report's gpu_time section has device 0 busy ~0.20 run and steady, process share too;
   gpu.idle fires with diagnosis input-bound (15 ms of host time a launch); the stream has gpu_health lines; the trace has
   the "gpu 0 busy %" and health counter tracks, with timestamps on the CLOCK_REALTIME base;
   the report matches docs/report-schema.md.
2. sync_bound at 20 %: gpu.idle fires with diagnosis sync-bound, naming sync.explicit-in-loop.
3. busy at 95 % with only the gpu_idle clock reason, 5.5 s (3+ steady health samples at one a
   second): neither gpu.idle nor gpu.clocks-throttled.
4. the same under a power cap (reason 0x4): gpu.clocks-throttled fires, gpu.idle not.
5. xid_crash: the Xid 79 the double raised is in the stream (gpu_event) and in the crash
   record, which also carries the last health sample.
6. nocuda: a process that never calls CUDA never loads NVML (and writes nothing).
7. CUDASHIM_GPU_SAMPLING=0: NVML is never read; the report says sampling is off.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

shim, fake, prog = sys.argv[1:4]
errors = []
env0 = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_LOG_LEVEL="error")


def run(mode, **extra):
    out = tempfile.mkdtemp()
    env = dict(env0, CUDASHIM_OUT=out, **extra)
    p = subprocess.run([prog, mode], env=env, capture_output=True, text=True, timeout=60)
    files = {ext: glob.glob(os.path.join(out, "*" + ext)) for ext in (".json", ".ndjson", ".trace")}
    report = None
    reports = [f for f in files[".json"] if not f.endswith("-crash.json")]
    if reports:
        report = json.load(open(reports[0]))
    return p, out, files, report


def device0(report, label):
    g = report.get("gpu_time") if report else None
    if not g or not g["devices"]:
        errors.append(f"{label}: no gpu_time devices: {g}")
        return None, []
    return g["devices"][0], [f["id"] for f in g["findings"]]


def near(x, want, tol=0.05):
    return x is not None and abs(x - want) <= tol


# 1. host-bound
p, out, files, report = run("host_bound", FAKENVML_UTIL_PCT="20")
if p.returncode != 0 or report is None:
    errors.append(f"host_bound: exit {p.returncode}, {p.stderr[-300:]}")
else:
    d, ids = device0(report, "host_bound")
    if d:
        g = report["gpu_time"]
        if g["sampling"]["mode"] != "nvml" or g["sampling"]["devices"] != 1:
            errors.append(f"host_bound: sampling {g['sampling']}")
        if not (d["run"] and near(d["run"]["busy"], 0.20) and d["steady"] and near(d["steady"]["busy"], 0.20)):
            errors.append(f"host_bound: shares run {d['run']} steady {d['steady']}")
        if not (d["process_steady"] and near(d["process_steady"]["busy"], 0.20)):
            errors.append(f"host_bound: process share {d['process_steady']}")
        if d["steady"] and d["steady"]["samples"] < 12:
            errors.append(f"host_bound: {d['steady']['samples']} steady samples at 6 a second over 3.5 s")
        if not 150000 <= d["sample_period_us"] <= 185000:
            errors.append(f"host_bound: sample period {d['sample_period_us']} us, the double's is 166667")
        if ids != ["gpu.idle"] or d["diagnosis"] != "input-bound":
            errors.append(f"host_bound: findings {ids}, diagnosis {d['diagnosis']}, evidence {d['evidence']}")
        print(f"host_bound: busy run {d['run']['busy']} steady {d['steady']['busy']} ({d['steady']['samples']} samples), "
              f"diagnosis {d['diagnosis']}, findings {ids}")
    if "nvml calls off the flush thread: 0" not in p.stdout or "nvml samples read: 0" in p.stdout:
        errors.append(f"host_bound: NVML read off the flush thread or not at all: {p.stdout.strip()!r}")
    lines = [json.loads(l) for l in open(files[".ndjson"][0])]
    health = [l for l in lines if l["type"] == "gpu_health"]
    if len(health) < 2 or health[0]["sm_mhz"] != 1980 or health[0]["power_mw"] != 300000:
        errors.append(f"host_bound: stream gpu_health lines {health[:2]}")
    if "t0_unix_ns" not in lines[0]:
        errors.append(f"host_bound: the start line has no t0_unix_ns: {lines[0]}")
    t = json.load(open(files[".trace"][0]))["traceEvents"]
    busy = [e for e in t if e.get("ph") == "C" and e["name"] == "gpu 0 busy %"]
    clocks = [e for e in t if e.get("ph") == "C" and e["name"] == "gpu 0 clocks MHz"]
    if len(busy) < 12 or busy[0]["args"]["busy"] != 20 or not clocks or clocks[0]["args"]["sm"] != 1980:
        errors.append(f"host_bound: trace counters busy {busy[:1]} clocks {clocks[:1]}")
    now_us = time.time() * 1e6
    stamps = [e["ts"] for e in t if "ts" in e]
    if not stamps or min(stamps) < now_us - 120e6 or max(stamps) > now_us + 1e6:
        errors.append(f"trace: timestamps not on the CLOCK_REALTIME base: {min(stamps, default=0)}..{max(stamps, default=0)} vs now {now_us}")

    here = os.path.dirname(os.path.abspath(__file__))
    chk = subprocess.run([sys.executable, os.path.join(here, "..", "hygiene", "check_report_schema.py"),
                          os.path.join(here, "..", "..", "docs", "report-schema.md"),
                          [f for f in files[".json"] if not f.endswith("-crash.json")][0]],
                         capture_output=True, text=True)
    if chk.returncode != 0:
        errors.append(f"host_bound: the report does not match docs/report-schema.md: {chk.stdout[-600:]}")

# 2. sync-bound
p, out, files, report = run("sync_bound", FAKENVML_UTIL_PCT="20")
d, ids = device0(report, "sync_bound") if report else (None, [])
if d and (ids != ["gpu.idle"] or d["diagnosis"] != "sync-bound" or
          not any("sync.explicit-in-loop" in e for e in d["evidence"])):
    errors.append(f"sync_bound: findings {ids}, diagnosis {d['diagnosis']}, evidence {d['evidence']}")
elif d:
    print(f"sync_bound: diagnosis {d['diagnosis']}: {d['evidence'][-1]}")

# 3. busy, clocks idle-lowered only: no finding
p, out, files, report = run("host_bound", FAKENVML_UTIL_PCT="95", FAKENVML_CLOCK_EVENT_REASONS="0x1", GPU_TIME_SECONDS="5.5")
d, ids = device0(report, "busy") if report else (None, [])
if d and (ids != [] or d["diagnosis"] != "gpu-bound" or d["health"]["throttled_samples"] != 0 or d["health"]["samples"] < 3):
    errors.append(f"busy: findings {ids}, diagnosis {d['diagnosis']}, health {d['health']}")
elif d:
    print(f"busy: diagnosis {d['diagnosis']}, no finding")

# 4. throttled under a power cap
p, out, files, report = run("host_bound", FAKENVML_UTIL_PCT="95", FAKENVML_CLOCK_EVENT_REASONS="0x4", GPU_TIME_SECONDS="5.5")
d, ids = device0(report, "throttled") if report else (None, [])
if d and (ids != ["gpu.clocks-throttled"] or d["health"]["slowdown_reasons"] != "sw_power_cap"
          or d["health"]["throttled_samples"] != d["health"]["samples"]):
    errors.append(f"throttled: findings {ids}, health {d['health']}")
elif d:
    print(f"throttled: {ids}, {d['health']['throttled_samples']}/{d['health']['samples']} samples {d['health']['slowdown_reasons']}")

# 5. an Xid, then a crash
p, out, files, report = run("xid_crash", FAKENVML_UTIL_PCT="50")
crash = glob.glob(os.path.join(out, "*-crash.json"))
if p.returncode != -11 or len(crash) != 1:
    errors.append(f"xid_crash: exit {p.returncode}, crash records {crash}, {p.stderr[-300:]}")
else:
    rec = json.load(open(crash[0]))
    g = rec.get("gpu", {})
    if [(e["type"], e["data"]) for e in g.get("events", [])] != [("xid", 79)] or not g.get("last_health") or \
            g["last_health"][0]["sm_mhz"] != 1980:
        errors.append(f"xid_crash: crash record gpu {g}")
    lines = [json.loads(l) for l in open(files[".ndjson"][0])]
    xids = [l for l in lines if l["type"] == "gpu_event"]
    if [(l["kind"], l["data"], l["device"]) for l in xids] != [("xid", 79, 0)]:
        errors.append(f"xid_crash: stream gpu_event lines {xids}")
    print(f"xid_crash: crash record gpu events {g.get('events')}; stream {len(xids)} gpu_event")

# 6. no CUDA, no NVML
p, out, files, report = run("nocuda")
if p.returncode != 0 or p.stdout.strip() != "nvml mapped: no" or os.listdir(out):
    errors.append(f"nocuda: exit {p.returncode}, {p.stdout.strip()!r}, files {os.listdir(out)}")
else:
    print("nocuda: NVML never loaded, no file")

# 7. sampling off
p, out, files, report = run("host_bound", FAKENVML_UTIL_PCT="20", CUDASHIM_GPU_SAMPLING="0")
g = (report or {}).get("gpu_time")
if not g or g["sampling"]["mode"] != "off" or g["devices"] or "nvml samples read: 0" not in p.stdout:
    errors.append(f"sampling off: {g and g['sampling']}, {p.stdout.strip()!r}")
else:
    print("CUDASHIM_GPU_SAMPLING=0: NVML never read")

for e in errors:
    print("FAIL: " + e)
print("ok: GPU time, health, findings, Xid and the no-CUDA case" if not errors else "")
sys.exit(1 if errors else 0)
