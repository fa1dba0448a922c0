#!/usr/bin/env python3
"""endings_sweep.py SHIM FAKECUDA_DIR ENDINGS [RUNS]: SIGTERM at random delays into the exit path.

`endings exit_sweep 1` makes 200 rounds of hooked calls (a worker thread keeps calling),
prints "exiting" and returns from main: the shim's destructor writes the stream's last
line, the report and the trace. Each run sends SIGTERM at a random delay (0 to 40 ms,
seeded, so a failure can be replayed) after that line. However the race falls (the exit
finished first: 0; SIGTERM first: killed by SIGTERM), every run must leave one complete
report (JSON, this pid, every round counted), a stream ending with its exit line, a
trace that parses, and no temporary file. Issue 22.7: 26 of 300 such runs left no report
and 2 left a `.trace.tmp.<pid>` (SIGTERM on the writing thread re-raised at once; the
destructor returned while the flush thread was still writing).
"""
import glob
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

shim, fake, prog = sys.argv[1:4]
runs = int(sys.argv[4]) if len(sys.argv) > 4 else int(os.environ.get("CUDASHIM_SWEEP_RUNS", "60"))
rng = random.Random(22)
env = dict(os.environ, LD_LIBRARY_PATH=fake, LD_PRELOAD=shim, CUDASHIM_LOG_LEVEL="warn")
failures, ends = [], {}
for i in range(runs):
    delay_ms = rng.uniform(0, 40)
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.Popen([prog, "exit_sweep", "1"], env=dict(env, CUDASHIM_OUT=out), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        line = p.stdout.readline()
        if line.strip() == "exiting":
            time.sleep(delay_ms / 1000)
            try:
                p.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            _, err = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        ends[p.returncode] = ends.get(p.returncode, 0) + 1
        files = sorted(os.listdir(out))
        what = []
        if p.returncode not in (0, -signal.SIGTERM):
            what.append(f"ended {p.returncode}")
        reports = [f for f in files if f.endswith(".json") and not f.endswith("-crash.json")]
        streams = [f for f in files if f.endswith(".ndjson")]
        traces = [f for f in files if f.endswith(".trace")]
        stray = [f for f in files if ".tmp" in f]
        if stray:
            what.append(f"stray {stray}")
        if len(reports) != 1:
            what.append(f"{len(reports)} reports")
        else:
            try:
                rep = json.load(open(os.path.join(out, reports[0])))
                calls = rep["api"]["cuLaunchKernel"]["calls"]
                if rep["process"]["pid"] != p.pid or calls < 200:
                    what.append(f"report of pid {rep['process']['pid']} with {calls} launches")
            except (ValueError, KeyError) as e:
                what.append(f"report unreadable: {e!r}")
        if len(streams) != 1:
            what.append(f"{len(streams)} streams")
        else:
            types = [json.loads(l)["type"] for l in open(os.path.join(out, streams[0]))]
            if "exit" not in types:
                what.append(f"stream without its exit line ({types[-2:]})")
        if len(traces) != 1:
            what.append(f"{len(traces)} traces")
        else:
            try:
                json.load(open(os.path.join(out, traces[0])))
            except ValueError as e:
                what.append(f"trace unreadable: {e!r}")
        if what:
            failures.append(f"run {i} (SIGTERM {delay_ms:.1f} ms after 'exiting'): {'; '.join(what)}; {files}"
                            f"{' ' + err[-300:] if err else ''}")
print(f"{runs} runs; ended: " + ", ".join(f"{k}: {v}" for k, v in sorted(ends.items())))
for f in failures:
    print("FAIL: " + f)
print(f"{runs - len(failures)} of {runs} runs left a complete report, stream and trace and no stray file")
sys.exit(1 if failures else 0)
