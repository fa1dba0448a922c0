#!/usr/bin/env python3
"""os_exit.py SHIM FAKECUDA_DIR ENDINGS: a process that leaves through _exit still leaves its report (issue 22, item 7).

_exit(2) runs no destructor and no atexit handler, and it is how multiprocessing's fork
children always end (os._exit after the target returns). Cases, each with and without the
shim (same exit code): multiprocessing fork children that make CUDA calls (a report per
child, its calls complete; the parent made none: no report), and tests/progs/endings
`_exit` (100 rounds, then _exit(5)) and `_Exit` (the same through _Exit).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

shim, fake, prog = sys.argv[1:4]
MP_JOB = r"""
import ctypes, multiprocessing as mp, os, sys
def child(n, code):
    cuda = ctypes.CDLL("libcuda.so.1")
    for _ in range(n):
        assert cuda.cuInit(0) == 0
    sys.exit(code)  # multiprocessing's fork child ends with os._exit(code) whatever it does
ctx = mp.get_context("fork")
ps = [ctx.Process(target=child, args=(n, n % 7)) for n in (3, 5, 8)]
for p in ps: p.start()
for p in ps: p.join()
print(",".join(f"{p.pid}:{p.exitcode}" for p in ps))
"""
errors = []


def run(argv, with_shim, out):
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="warn")
    env.pop("LD_PRELOAD", None)
    if with_shim:
        env["LD_PRELOAD"] = shim
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)


def reports(out):
    got = {}
    for f in glob.glob(os.path.join(out, "cudashim-*.json")):
        if not f.endswith("-crash.json"):
            r = json.load(open(f))
            got[r["process"]["pid"]] = r
    return got


with tempfile.TemporaryDirectory() as o0, tempfile.TemporaryDirectory() as out:
    plain, p = run([sys.executable, "-c", MP_JOB], False, o0), run([sys.executable, "-c", MP_JOB], True, out)
    codes0 = [c.split(":")[1] for c in plain.stdout.strip().split(",")]
    kids = [tuple(map(int, c.split(":"))) for c in p.stdout.strip().split(",")] if p.returncode == 0 else []
    if p.returncode != 0 or [str(c) for _, c in kids] != codes0:
        errors.append(f"multiprocessing: exit {p.returncode}, children {kids}, without the shim {codes0}: {p.stderr[-800:]}")
    reps = reports(out)
    calls = {pid: reps[pid]["api"].get("cuInit", {}).get("calls", 0) if pid in reps else None for pid, _ in kids}
    if sorted(c for c in calls.values() if c is not None) != [3, 5, 8] or len(reps) != 3:
        errors.append(f"multiprocessing: reports {sorted(reps)} with cuInit calls {calls}, expected 3, 5, 8")
    print(f"multiprocessing fork children: exit codes {[c for _, c in kids]} (without the shim {codes0}); "
          f"cuInit calls per child report {sorted(calls.values(), key=str)}; {len(reps)} reports")

for mode, code in (("_exit", 5), ("_Exit", 6)):
    with tempfile.TemporaryDirectory() as o0, tempfile.TemporaryDirectory() as out:
        plain, p = run([prog, mode], False, o0), run([prog, mode], True, out)
        reps = reports(out)
        n = [r["api"].get("cuLaunchKernel", {}).get("calls", 0) for r in reps.values()]
        if plain.returncode != code or p.returncode != code:
            errors.append(f"{mode}: ended {p.returncode} with the shim, {plain.returncode} without, expected {code}")
        if n != [100]:
            errors.append(f"{mode}: reports counting {n} launches, expected one with 100: {os.listdir(out)}")
        streams = glob.glob(os.path.join(out, "*.ndjson"))
        last = [json.loads(l)["type"] for l in open(streams[0])][-1:] if len(streams) == 1 else []
        if last != ["exit"]:
            errors.append(f"{mode}: the stream ends {last}, not with its exit line")
        print(f"{mode}: ended {p.returncode} (without the shim {plain.returncode}); launches in the report {n}")
for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: _exit and _Exit leave the report, multiprocessing fork children included")
sys.exit(1 if errors else 0)
