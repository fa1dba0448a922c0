#!/usr/bin/env python3
"""dl_counts.py SHIM FAKECUDA_DIR DLOPEN_SEQUENCE: the report's dlopen counters are the program's.

dlopen_sequence opens libm and libz, then libcuda.so.1, calls cuInit and waits 1.5 s: long
enough for the library watcher, on the shim's own thread, to re-read the loaded set with its
own dlopen(RTLD_NOLOAD) and dlclose calls. Those are the shim's, not the program's: the report
must say exactly 3 dlopen calls, 1 of them for libcuda, and 0 dlclose calls (it said 6, 4 and
3 when the watcher's own calls were counted).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

shim, fake, prog = sys.argv[1:4]
want = {"dlopen_calls": 3, "libcuda_dlopen_requests": 1, "dlclose_calls": 0}
errors = []
for attempt in range(3):  # the watcher's timing varies: every run must be exact
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out)
        p = subprocess.run([prog, "now:libm.so.6", "lazy:libz.so.1"], env=env, capture_output=True, text=True,
                           timeout=60)
        reps = glob.glob(os.path.join(out, "cudashim-*.json"))
        if p.returncode != 0 or len(reps) != 1:
            errors.append(f"run {attempt}: exit {p.returncode}, {len(reps)} reports: {p.stderr[-300:]}")
            continue
        got = json.load(open(reps[0]))["interposition"]
        got = {k: got.get(k) for k in want}
        if got != want:
            errors.append(f"run {attempt}: interposition {got}, expected {want}")
        print(f"run {attempt}: {got}")
for e in errors:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
