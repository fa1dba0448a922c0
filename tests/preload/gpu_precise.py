#!/usr/bin/env python3
"""gpu_precise.py SHIM FAKECUDA_DIR GPU_TIME CUPTI_CLIENT FAKECUPTI FAKECUDART: the precise mode of GPU
time (CUDASHIM_GPU_PRECISE=1) through the CUPTI double (tests/fakecuda/fakecupti.cpp), whose
records are the kernels the fake driver ran (FAKECUDA_KERNEL_US each).

1. host-bound: 3 ms kernels, 15 ms of host work a step, NVML scripted at 60 %: the precise busy
   share is the kernels' (~0.2, not NVML's 0.60), gpu.idle fires input-bound from CUPTI's
   figures; libcupti found in $CUDA_HOME/extras/CUPTI/lib64; the clock offset is CLOCK_REALTIME
   minus CLOCK_MONOTONIC (the double stamps on CLOCK_REALTIME) within its stated error; the
   report matches docs/report-schema.md.
2. launch-bound: 2 us kernels: every kernel is short, diagnosis launch-bound.
3. lookup order: libcupti next to the loaded libcudart (a nvidia/cu13/lib-like folder) wins over
   $CUDA_HOME's.
4. not available: no libcupti anywhere: the report says precise was asked for, why not, and
   every path tried; NVML's figures are there and the diagnosis comes from them.
5. a profiler at start (CUDA_INJECTION64_PATH): stands aside, never loads libcupti.
6. a profiler later (cupti_client plays Kineto after 1.5 s, with cuptiSubscribe): cudashim
   stands aside at that moment naming the client, the client gets every record of its window,
   its cuptiSubscribe succeeds, and cudashim kept the records from before.
7. no CUDA call: libcupti is never loaded.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

shim, fake, gpu_time, client, fakecupti, fakecudart = sys.argv[1:7]
major = fakecupti.rsplit(".so.", 1)[1].split(".")[0]
errors = []
env0 = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_LOG_LEVEL="error", CUDASHIM_GPU_PRECISE="1")
for k in list(env0):
    if k in ("CUDA_HOME", "CUDA_INJECTION64_PATH") or k.startswith(("NSYS_", "NSIGHT_")):
        del env0[k]
system_cupti = f"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.{major}"


def cuda_home():
    """A folder laid out as a toolkit with the double as its libcupti."""
    home = tempfile.mkdtemp()
    os.makedirs(os.path.join(home, "extras", "CUPTI", "lib64"))
    os.symlink(fakecupti, os.path.join(home, "extras", "CUPTI", "lib64", f"libcupti.so.{major}"))
    return home


def run(prog, args, **extra):
    out = tempfile.mkdtemp()
    env = dict(env0, CUDASHIM_OUT=out, **extra)
    p = subprocess.run([prog] + args, env=env, capture_output=True, text=True, timeout=60)
    reports = [f for f in glob.glob(os.path.join(out, "*.json")) if not f.endswith("-crash.json")]
    report = json.load(open(reports[0])) if reports else None
    if p.returncode != 0 or report is None:
        errors.append(f"{prog} {args}: exit {p.returncode}, report {bool(report)}, {p.stderr[-400:]}")
    return p, report, reports[0] if reports else None


def near(x, want, tol):
    return x is not None and abs(x - want) <= tol


# 1. host-bound
p, r, path = run(gpu_time, ["host_bound"], FAKECUDA_KERNEL_US="3000", FAKENVML_UTIL_PCT="60", CUDA_HOME=cuda_home())
if r:
    g = r["gpu_time"]
    pr = g["precise"]
    real_minus_mono = (time.clock_gettime_ns(time.CLOCK_REALTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC))
    if pr["mode"] != "cupti" or pr["found_by"] != "$CUDA_HOME/extras/CUPTI/lib64" or not pr["asked"]:
        errors.append(f"host_bound: precise {pr}")
    elif not pr["devices"]:
        errors.append(f"host_bound: no precise devices: {pr}")
    else:
        d = pr["devices"][0]
        # a 3 ms kernel runs during the 15 ms of host work of each step: at most 0.20, less as steps stretch
        if not near(d["steady"]["busy"], 0.19, 0.03) or d["kernels"] < 150 or d["short_kernels"] != 0:
            errors.append(f"host_bound: precise device {d}")
        if not near(pr["clock_offset_ns"], real_minus_mono, 2e6) or pr["clock_error_ns"] > 1e6:
            errors.append(f"host_bound: clock offset {pr['clock_offset_ns']} +- {pr['clock_error_ns']}, "
                          f"want realtime - monotonic = {real_minus_mono}")
        dev = g["devices"][0]
        ids = [f["id"] for f in g["findings"]]
        if dev["diagnosis"] != "input-bound" or ids != ["gpu.idle"] or dev.get("diagnosis_from") != "cupti" or \
                not any("CUPTI" in e for e in dev["evidence"]) or not near(dev["steady"]["busy"], 0.60, 0.05):
            errors.append(f"host_bound: diagnosis {dev['diagnosis']} from {dev.get('diagnosis_from')}, {ids}, "
                          f"NVML steady {dev['steady']}, evidence {dev['evidence']}")
        print(f"host_bound: precise busy {d['steady']['busy']} ({d['kernels']} kernels) vs NVML "
              f"{dev['steady']['busy']}; diagnosis {dev['diagnosis']} from {dev.get('diagnosis_from')}; "
              f"clock offset error {pr['clock_error_ns']} ns")
    here = os.path.dirname(os.path.abspath(__file__))
    chk = subprocess.run([sys.executable, os.path.join(here, "..", "hygiene", "check_report_schema.py"),
                          os.path.join(here, "..", "..", "docs", "report-schema.md"), path],
                         capture_output=True, text=True)
    if chk.returncode != 0:
        errors.append(f"host_bound: the report does not match docs/report-schema.md: {chk.stdout[-600:]}")

# 2. launch-bound
p, r, _ = run(gpu_time, ["host_bound"], FAKECUDA_KERNEL_US="2", FAKENVML_UTIL_PCT="60", CUDA_HOME=cuda_home())
if r:
    dev = r["gpu_time"]["devices"][0] if r["gpu_time"]["devices"] else {}
    pd = r["gpu_time"]["precise"]["devices"]
    if dev.get("diagnosis") != "launch-bound" or not pd or pd[0]["short_kernel_share"] != 1.0:
        errors.append(f"launch_bound: diagnosis {dev.get('diagnosis')}, precise {pd}, evidence {dev.get('evidence')}")
    else:
        print(f"launch_bound: {pd[0]['kernels']} kernels, all short; diagnosis {dev['diagnosis']}")

# 3. lookup order: next to the loaded libcudart beats $CUDA_HOME
lib = os.path.join(tempfile.mkdtemp(), "nvidia", f"cu{major}", "lib")
os.makedirs(lib)
os.symlink(fakecudart, os.path.join(lib, os.path.basename(fakecudart).split(".so")[0] + f".so.{major}"))
os.symlink(fakecupti, os.path.join(lib, f"libcupti.so.{major}"))
p, r, _ = run(gpu_time, ["host_bound"], FAKECUDA_KERNEL_US="1000", GPU_TIME_SECONDS="1", CUDA_HOME=cuda_home(),
              LD_LIBRARY_PATH=lib + ":" + fake)
if r:
    pr = r["gpu_time"]["precise"]
    if pr["mode"] != "cupti" or pr["found_by"] != "next to the loaded libcudart" or \
            pr["library"] != os.path.join(lib, f"libcupti.so.{major}"):
        errors.append(f"next_to_cudart: precise {pr}")
    else:
        print(f"next_to_cudart: {pr['library']} ({pr['found_by']})")

# 4. not available
if os.path.exists(system_cupti):
    print(f"not_available: not run: {system_cupti} exists on this machine")
else:
    p, r, _ = run(gpu_time, ["host_bound"], FAKENVML_UTIL_PCT="20")
    if r:
        pr = r["gpu_time"]["precise"]
        dev = r["gpu_time"]["devices"][0] if r["gpu_time"]["devices"] else {}
        if pr["mode"] != "unavailable" or not pr["asked"] or f"libcupti.so.{major}" not in pr["reason"] or \
                system_cupti not in pr["tried"] or "CUDA_HOME unset" not in pr["tried"] or \
                dev.get("diagnosis") != "input-bound" or dev.get("diagnosis_from") != "nvml":
            errors.append(f"not_available: precise {pr}, diagnosis {dev.get('diagnosis')} from {dev.get('diagnosis_from')}")
        else:
            print(f"not_available: {pr['reason']}; tried {pr['tried']}")

# 5. a profiler injected at start
p, r, _ = run(gpu_time, ["host_bound"], GPU_TIME_SECONDS="1", CUDA_HOME=cuda_home(),
              CUDA_INJECTION64_PATH="/opt/nsys/libToolsInjection64.so")
if r:
    pr = r["gpu_time"]["precise"]
    if pr["mode"] != "stood_aside" or "CUDA_INJECTION64_PATH" not in (pr["other_profiler"] or "") or pr["library"]:
        errors.append(f"injected: precise {pr}")
    else:
        print(f"injected: {pr['mode']}: {pr['other_profiler']}")

# 6. a profiler that starts later
p, r, _ = run(client, ["subscribe"], FAKECUDA_KERNEL_US="2000")
if r:
    pr = r["gpu_time"]["precise"]
    out = dict(l.split(": ", 1) for l in p.stdout.strip().splitlines() if ": " in l)
    launched, got = int(out.get("client launches while profiling", -1)), int(out.get("client records", -2))
    if launched <= 0 or got != launched or out.get("client subscribe") != "0":
        errors.append(f"later: the client got {got} records of {launched} kernels, subscribe {out.get('client subscribe')}")
    if pr["mode"] != "stood_aside" or pr["found_by"] != "already loaded in the process" or \
            "cupti_client" not in (pr["other_profiler"] or "") or "cuptiActivityRegisterCallbacks" not in pr["other_profiler"] or \
            not pr["stood_aside_ns"] or not 1.3e9 <= pr["stood_aside_ns"] <= 3.0e9:
        errors.append(f"later: precise {pr}")
    elif not pr["devices"] or not 10 <= pr["devices"][0]["kernels"] <= 110:  # from the first tick (up to ~1 s in) to 1.5 s
        errors.append(f"later: cudashim's own records before the client: {pr['devices']}")
    else:
        print(f"later: stood aside at {pr['stood_aside_ns'] / 1e9:.2f} s for {pr['other_profiler']}; "
              f"cudashim kept {pr['devices'][0]['kernels']} kernels; the client got {got} of {launched}")

# 7. no CUDA call, no libcupti
out = tempfile.mkdtemp()
p = subprocess.run([gpu_time, "nocuda", "cupti"], env=dict(env0, CUDASHIM_OUT=out, CUDA_HOME=cuda_home()),
                   capture_output=True, text=True, timeout=60)
if p.returncode != 0 or p.stdout.strip() != "cupti mapped: no" or os.listdir(out):
    errors.append(f"nocuda: exit {p.returncode}, {p.stdout.strip()!r}, files {os.listdir(out)}")

if errors:
    print("FAIL:\n  " + "\n  ".join(errors))
    sys.exit(1)
print("ok")
