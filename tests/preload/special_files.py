#!/usr/bin/env python3
"""special_files.py SHIM FAKECUDA_DIR PROG: every file the shim reads is bounded. A FIFO, a
device or a directory named where a file is expected is refused at once with one message that
names the variable and the file; nothing waits on it, nothing reads it without end.

Before: CUDASHIM_DRIVER_VERSION_FILE=<FIFO> or /proc/self/fd/1 hung the job at exit (the
flush thread blocked in open(2) holding the library inventory's lock, which the exit path
takes).

PROG is tests/progs/driver_paths. Each run has a 20 s timeout; the times are printed."""
import glob
import os
import subprocess
import sys
import tempfile
import time

shim, fake, prog = sys.argv[1:4]
errs = []
times = []


def run(label, cmd, env, timeout=20):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired:
        errs.append(f"{label}: still running after {timeout} s")
        times.append((label, None))
        return None
    times.append((label, time.monotonic() - t0))
    return p


def shim_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("cudashim[")]


with tempfile.TemporaryDirectory() as d:
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    base = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}
    base.update(LD_PRELOAD=shim, LD_LIBRARY_PATH=fake)

    # The kernel module's version file: a FIFO, or the job's own stdout (a pipe here). The
    # job ends normally, the report is written, one warning names the variable and the file.
    for value, kind in ((fifo, "a FIFO"), ("/proc/self/fd/1", "a FIFO")):
        out = tempfile.mkdtemp(dir=d)
        p = run(f"CUDASHIM_DRIVER_VERSION_FILE={value}", [prog, "procaddr", "3"],
                dict(base, CUDASHIM_OUT=out, CUDASHIM_DRIVER_VERSION_FILE=value))
        if p is None:
            continue
        lines = [l for l in shim_lines(p.stderr) if "CUDASHIM_DRIVER_VERSION_FILE" in l]
        want = f"CUDASHIM_DRIVER_VERSION_FILE={value}: not a regular file ({kind}): the driver-bridge check is skipped"
        if p.returncode != 0 or "expect_calls" not in p.stdout:
            errs.append(f"CUDASHIM_DRIVER_VERSION_FILE={value}: exit {p.returncode}: {p.stderr[-400:]!r}")
        if len(lines) != 1 or want not in lines[0]:
            errs.append(f"CUDASHIM_DRIVER_VERSION_FILE={value}: expected one warning with {want!r}: {lines}")
        if len(glob.glob(os.path.join(out, "cudashim-*.json"))) != 1:
            errs.append(f"CUDASHIM_DRIVER_VERSION_FILE={value}: no report in {os.listdir(out)}")

for label, t in times:
    print(f"{label:<60} {'timeout' if t is None else f'{t * 1000:.0f} ms'}")
for e in errs:
    print("FAIL: " + e)
if errs:
    sys.exit(1)
print("ok: a FIFO or /proc/self/fd/1 as CUDASHIM_DRIVER_VERSION_FILE: refused at once, named, the job's exit status "
      "unchanged")
