#!/usr/bin/env python3
"""special_files.py SHIM FAKECUDA_DIR PROG CLI: every file the shim reads is bounded. A FIFO, a
device or a directory named where a file is expected is refused at once with one message that
names the variable and the file; nothing waits on it, nothing reads it without end.

Before: CUDASHIM_POLICY=<FIFO> hung every preloaded process at load; CUDASHIM_POLICY=/dev/zero
read about 1 GB until bad_alloc (30 s); CUDASHIM_DRIVER_VERSION_FILE=<FIFO> or /proc/self/fd/1
hung the job at exit (the flush thread blocked in open(2) holding the library inventory's lock,
which the exit path takes); `cudashim policy check <FIFO>` hung.

PROG is tests/progs/driver_paths. Each run has a 20 s timeout; the times are printed."""
import glob
import os
import subprocess
import sys
import tempfile
import time

shim, fake, prog, cli = sys.argv[1:5]
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
    for path, kind in ((fifo, "a FIFO"), ("/dev/zero", "a character device"), (d, "a directory")):
        named = f"{path}: not a regular file ({kind}); CUDASHIM_POLICY must name a regular TOML file of at most 64 KiB"
        out = tempfile.mkdtemp(dir=d)
        # on_invalid = fail (the default): the CUDA job stops at its first call, saying why.
        p = run(f"CUDASHIM_POLICY={path}", [prog, "procaddr", "3"], dict(base, CUDASHIM_OUT=out, CUDASHIM_POLICY=path))
        if p is not None:
            lines = shim_lines(p.stderr)
            if p.returncode != 78 or len(lines) != 1 or f"invalid policy: {named}; stopping" not in lines[0]:
                errs.append(f"CUDASHIM_POLICY={path}: exit {p.returncode}, expected 78 and one line with "
                            f"{named!r}: {lines}")
        # on_invalid = warn from the environment: the job runs, its exit status unchanged, one warning.
        p = run(f"CUDASHIM_POLICY={path}, CUDASHIM_ON_INVALID=warn", [prog, "procaddr", "3"],
                dict(base, CUDASHIM_OUT=out, CUDASHIM_POLICY=path, CUDASHIM_ON_INVALID="warn"))
        if p is not None:
            lines = [l for l in shim_lines(p.stderr) if "invalid policy" in l]
            if p.returncode != 0 or "expect_calls" not in p.stdout or len(lines) != 1 or named not in lines[0]:
                errs.append(f"CUDASHIM_POLICY={path} under warn: exit {p.returncode}, warnings {lines}")
        # A process without CUDA: as without the shim.
        p = run(f"CUDASHIM_POLICY={path}: sh -c 'exit 3'", ["sh", "-c", "echo hi; exit 3"],
                dict(base, CUDASHIM_OUT=out, CUDASHIM_POLICY=path))
        if p is not None and (p.returncode, p.stdout, p.stderr) != (3, "hi\n", ""):
            errs.append(f"CUDASHIM_POLICY={path}: sh -c: exit {p.returncode}, {p.stdout!r}, {p.stderr!r}")
        # The CLI reads it the same way.
        p = run(f"cudashim policy check {path}", [cli, "policy", "check", path],
                {k: v for k, v in base.items() if k != "LD_PRELOAD"})
        if p is not None and (p.returncode != 78 or f"{path}: not a regular file ({kind})" not in p.stderr):
            errs.append(f"cudashim policy check {path}: exit {p.returncode}: {p.stderr!r}")

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
print("ok: FIFO, /dev/zero, a directory as CUDASHIM_POLICY and a FIFO or /proc/self/fd/1 as "
      "CUDASHIM_DRIVER_VERSION_FILE: each refused at once, named, the job's exit status unchanged")
