#!/usr/bin/env python3
"""stream_report.py CLI SHIM FAKECUDA_DIR PROG: `cudashim report` on a process that left no report.

A process killed with SIGKILL leaves only its event stream (flushed every second). The
report command must read what is there (the last counters, what was loaded) and say that
the stream stops without an exit line; a stream whose last line was cut must be read up to
that line, with the cut named; a truncated crash record must be named and skipped. PROG is
tests/progs/version_probe (cuInit, then a sleep), killed once its first snapshot is written.
"""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time

cli, shim, fake, prog = sys.argv[1:5]
errors = []
with tempfile.TemporaryDirectory() as out:
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="error")
    p = subprocess.Popen([prog, os.path.join(fake, "libcuda.so.1"), "60"], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # until the first one-second snapshot is on disk
        if any('"type": "snapshot"' in open(s).read() for s in glob.glob(os.path.join(out, "cudashim-*.ndjson"))):
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGKILL)
    p.wait()
    streams = glob.glob(os.path.join(out, "cudashim-*.ndjson"))
    if p.returncode != -signal.SIGKILL or len(streams) != 1 or glob.glob(os.path.join(out, "cudashim-*.json")):
        errors.append(f"setup: exit {p.returncode}, streams {streams}, reports {glob.glob(os.path.join(out, '*.json'))}")
    else:
        r = subprocess.run([cli, "report", out], capture_output=True, text=True)
        text = r.stdout
        want = [f"process {p.pid}: no report", "without an exit line", "hooked calls", "stream: "]
        missing = [w for w in want if w not in text]
        if r.returncode != 0 or missing:
            errors.append(f"killed: exit {r.returncode}, missing {missing}:\n{text}{r.stderr}")
        print(text, end="")
        # the last line cut in the middle (as a write interrupted by SIGKILL leaves it)
        with open(streams[0], "a") as f:
            f.write('{"t_ns": 1700000000, "type": "snaps')
        r = subprocess.run([cli, "report", out], capture_output=True, text=True)
        if r.returncode != 0 or "cut:" not in r.stdout or "incomplete" not in r.stdout or "hooked calls" not in r.stdout:
            errors.append(f"cut stream: exit {r.returncode}:\n{r.stdout}{r.stderr}")
        print(r.stdout, end="")
        # a crash record cut short is named and skipped; the stream is still read
        with open(os.path.join(out, "cudashim-vm-1-crash.json"), "w") as f:
            f.write('{"schema": "cudashim.crash/1", "pid": 1, "reason": "sig')
        r = subprocess.run([cli, "report", out], capture_output=True, text=True)
        if "cudashim-vm-1-crash.json: not a JSON report (truncated or corrupt)" not in r.stderr or "no report" not in r.stdout:
            errors.append(f"cut crash record: exit {r.returncode}:\n{r.stdout}{r.stderr}")
        print(r.stderr, end="")
for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: a killed process's stream is read up to its last complete line, and each cut is named")
sys.exit(1 if errors else 0)
