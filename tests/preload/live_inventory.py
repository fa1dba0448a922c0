#!/usr/bin/env python3
"""live_inventory.py SHIM FAKECUDA_DIR PROG CUDART13 CUDART129 [EXAMPLE_BINARY]

The library watcher, live: under a driver for CUDA 12.8 (the test double with
FAKECUDA_DRIVER_VERSION=12080), a program loads NVIDIA's libcudart 13.0 by path,
asks the driver for entry points itself (as a statically linked runtime 13.0
does), loads PTX and the fatbin containers of a real nvcc-built binary, and a
second later loads libcudart 12.9 by soname through LD_LIBRARY_PATH. Checks:
  - each finding's log line comes while the job runs, before the mark that follows
    the event which caused it (driver.too-old, module.ptx-jit,
    env.jit-cache-disabled before "MARK first"; library.mixed-majors-in-process and
    driver.minor-compat after it and before "MARK second");
  - the report's inventory says how each library came in and why that file;
  - the modules section counts the PTX and the fatbin containers with their
    coverage for the device (sm_90 in the double);
  - the event stream has a library_load line for each runtime, a second apart,
    and the trace has the load instants.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

shim, fake, prog, rt13, rt129 = sys.argv[1:6]
example = sys.argv[6] if len(sys.argv) > 6 else ""
errors = []


def check(cond, what):
    if not cond:
        errors.append(what)
    return cond


with tempfile.TemporaryDirectory() as out:
    args = [prog, rt13, "libcudart.so.12"]
    if example and os.path.exists(example) and shutil.which("objcopy"):
        sec = os.path.join(out, "example.nv_fatbin")
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", example, sec], check=True)
        args.append(sec)
    lib129 = os.path.dirname(os.path.realpath(rt129))
    # The wheel first: a 12.9 build of the test double has its own fake libcudart.so.12.
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=f"{lib129}:{fake}", CUDASHIM_OUT=out,
               FAKECUDA_DRIVER_VERSION="12080", CUDA_CACHE_DISABLE="1", CUDASHIM_TEST_HOOK_NAMES="/dev/null")
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    lines = p.stderr.splitlines()
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-600:]}")

    def line_of(text):
        return next((i for i, l in enumerate(lines) if text in l), None)

    first, second = line_of("MARK first"), line_of("MARK second")
    check(first is not None and second is not None, f"marks missing: {p.stderr[-600:]}")
    for fid, lo, hi in [("driver.too-old", None, first), ("module.ptx-jit", None, first),
                        ("env.jit-cache-disabled", None, first),
                        ("library.mixed-majors-in-process", first, second), ("driver.minor-compat", first, second)]:
        i = line_of(f"[{fid}]")
        if check(i is not None, f"no log line for {fid}"):
            check((lo is None or i > lo) and (hi is None or i < hi),
                  f"{fid} logged at line {i}, expected between marks {lo} and {hi}: {lines[i][:200]}")
            print(lines[i][:220])
    too_old = [l for l in lines if "[driver.too-old]" in l]
    check(any(os.path.realpath(prog) in l or prog in l for l in too_old),
          f"driver.too-old does not name the program's static runtime: {too_old}")
    check(sum("[library.mixed-majors-in-process]" in l for l in lines) == 1, "library.mixed-majors-in-process logged more than once")

    reps = glob.glob(os.path.join(out, "cudashim-*.json"))
    if check(len(reps) == 1, f"{len(reps)} reports"):
        r = json.load(open(reps[0]))
        libs = r["libraries"]
        by_file = {l["file"]: l for l in libs if l["linkage"] == "shared"}
        l13, l129 = by_file.get(os.path.realpath(rt13)), by_file.get(os.path.realpath(rt129))
        if check(l13 is not None and l129 is not None, f"runtimes missing from {list(by_file)}"):
            check(l13["how"] == "dlopen" and l13["reason"] == "path given by the caller" and
                  os.path.realpath(l13["loaded_by"]) == os.path.realpath(prog), f"13.0 row: {l13}")
            check(l129["how"] == "dlopen" and l129["requested"] == "libcudart.so.12" and
                  "LD_LIBRARY_PATH" in l129["reason"] and lib129 in l129["reason"], f"12.9 row: {l129}")
            print("12.9:", l129["how"], l129["requested"], "->", l129["reason"])
        static = [l for l in libs if l["linkage"] == "static"]
        check(len(static) == 1 and os.path.realpath(static[0]["path"]) == os.path.realpath(prog) and
              static[0]["version"] == "13.0", f"static runtime row: {static}")
        ids = {f["id"] for f in r["library_findings"]}
        for fid in ["driver.too-old", "driver.minor-compat", "library.mixed-majors-in-process", "module.ptx-jit",
                    "env.jit-cache-disabled"]:
            check(fid in ids, f"{fid} not in the report's library_findings {sorted(ids)}")
        m = r["modules"]
        check(m["ptx_jit_bytes"] >= 65536, f"modules.ptx_jit_bytes {m['ptx_jit_bytes']}")
        callers = {os.path.realpath(c["module"]) for c in m["by_caller"]}
        check(os.path.realpath(prog) in callers, f"by_caller {callers}")
        fat = [s for s in m["slowest"] if s["kind"] == "fatbin"]
        if len(args) > 3:
            check(m["count"] >= 2 and fat, f"no fatbin load in {m['slowest']}")
            with_code = [s for s in fat if s["coverage"] == "sass"]
            check(with_code and all(s["sm"] == 90 and "sm_90" in s["archs"] and s["sass_bytes_for_device"] > 0
                                    for s in with_code), f"fatbin loads: {fat}")
            check(not any(s["coverage"] in ("none", "ptx_jit") for s in fat), f"fatbin wrongly flagged: {fat}")
            print("fatbin loads:", [(s["coverage"], s["archs"], s["bytes"]) for s in fat])
        ptx = [s for s in m["slowest"] if s["kind"] == "ptx"]
        check(ptx and ptx[0]["coverage"] == "ptx_jit", f"ptx load: {ptx}")
    streams = glob.glob(os.path.join(out, "cudashim-*.ndjson"))
    if check(len(streams) == 1, f"{len(streams)} streams"):
        ev = [json.loads(l) for l in open(streams[0]) if l.strip()]
        loads = {e["library"]["file"]: e["t_ns"] for e in ev if e["type"] == "library_load"}
        t13, t129 = loads.get(os.path.realpath(rt13)), loads.get(os.path.realpath(rt129))
        if check(t13 is not None and t129 is not None, f"library_load events: {list(loads)}"):
            check(t129 - t13 >= 1.0e9, f"12.9 seen {(t129 - t13) / 1e9:.2f} s after 13.0, expected >= 1 s")
        check(any(e["type"] == "library_finding" for e in ev), "no library_finding event")
    traces = glob.glob(os.path.join(out, "cudashim-*.trace"))
    if check(len(traces) == 1, "no trace"):
        t = json.load(open(traces[0]))
        check(any(e.get("cat") == "library" and e["name"] == "load cudart" for e in t["traceEvents"]),
              "no library load instant in the trace")
for e in errors:
    print("FAIL: " + e)
print("ok: live inventory" if not errors else "")
sys.exit(1 if errors else 0)
