#!/usr/bin/env python3
"""policy_invalid.py SHIM FAKECUDA_DIR PROG PROG_DIRECT: a malformed policy stops a process at
its first CUDA call, never at load, with exit 78 and one line naming file:line:column and what
to do; on_invalid = "warn" lets it run, with the warnings only in a process that uses CUDA.

PROG is tests/progs/driver_paths (PROG_DIRECT its build linked to libcuda). Each way to the
driver stops at its first step: a hooked export called directly, dlsym of a hooked name,
cuGetProcAddress. A Python process prints, loads libcuda with ctypes (a load is no use), then
asks for cuInit: it stops there, after its first line and before its second. Before this, the
stop came from the library's constructor: `bash -c 'echo step1'` exited 78 too."""
import os
import subprocess
import sys
import tempfile

shim, fake, prog, prog_direct = sys.argv[1:5]
errs = []


def shim_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("cudashim[")]


with tempfile.TemporaryDirectory() as d:
    bad = os.path.join(d, "bad.toml")
    with open(bad, "w") as f:
        f.write('[memory]\ncap = "8GiB"\nmanaged = "sometimes"\npool_max_cahced = 1\n')
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=d, CUDASHIM_POLICY=bad)
    env.pop("CUDASHIM_ON_INVALID", None)
    stop = (f"error: invalid policy: {bad}:3:11: memory.managed='sometimes' is not valid: use allow, warn, deny "
            f"(and 1 more); stopping at the first CUDA call (exit 78): fix the file (`cudashim policy check {bad}` "
            f"lists every error) or set policy.on_invalid = \"warn\" in it")
    ctypes_prog = ("import ctypes, sys; print('before', flush=True); lib = ctypes.CDLL('libcuda.so.1'); "
                   "print('loaded', flush=True); lib.cuInit(0); print('after')")
    for cmd, out_before in (([prog_direct, "direct", "3"], ""), ([prog, "dlsym", "3"], ""),
                            ([prog, "procaddr", "3"], ""), ([sys.executable, "-c", ctypes_prog], "before\nloaded\n")):
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
        what = " ".join(os.path.basename(c) for c in cmd[:2])
        lines = shim_lines(p.stderr)
        if p.returncode != 78:
            errs.append(f"{what}: exit code {p.returncode}, expected 78: {p.stderr[-400:]!r}")
        if len(lines) != 1 or not lines[0].endswith(stop):
            errs.append(f"{what}: expected the one line ...{stop!r}, got {lines}")
        if p.stdout != out_before:
            errs.append(f"{what}: stdout {p.stdout!r}, expected {out_before!r}: the process must stop at its first "
                        f"CUDA call, not before and not after")
    if os.listdir(d) != ["bad.toml"]:
        errs.append(f"a stopped process left files: {os.listdir(d)}")

    # A process that never uses CUDA runs as without the shim, silently.
    p = subprocess.run(["bash", "-c", "echo step1"], env=env, capture_output=True, text=True, timeout=60)
    if (p.returncode, p.stdout, p.stderr) != (0, "step1\n", ""):
        errs.append(f"bash -c 'echo step1': exit {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr!r}")

    with open(bad, "a") as f:
        f.write('[policy]\non_invalid = "warn"\n')
    p2 = subprocess.run([prog, "procaddr", "3"], env=env, capture_output=True, text=True, timeout=60)
    if p2.returncode != 0 or "expect_calls" not in p2.stdout:
        errs.append(f"with on_invalid = warn the job must run: exit {p2.returncode}, stderr {p2.stderr!r}")
    want = [f"warning: invalid policy (ignored: on_invalid = \"warn\"): {bad}:3:11: memory.managed='sometimes'",
            f"warning: invalid policy (ignored: on_invalid = \"warn\"): {bad}:4:19: unknown setting 'memory.pool_max_cahced'"]
    got = [l for l in shim_lines(p2.stderr) if "invalid policy" in l]
    if len(got) != 2 or any(w not in g for w, g in zip(want, got)):
        errs.append(f"with on_invalid = warn each error is one warning, once: {got}")
    p3 = subprocess.run(["bash", "-c", "echo step1"], env=env, capture_output=True, text=True, timeout=60)
    if (p3.returncode, p3.stdout, p3.stderr) != (0, "step1\n", ""):
        errs.append(f"on_invalid = warn: a process without CUDA stays silent: {p3.returncode} {p3.stderr!r}")
for e in errs:
    print("FAIL: " + e)
if errs:
    sys.exit(1)
print("ok: malformed policy -> exit 78 at the first CUDA call (direct, dlsym, cuGetProcAddress, ctypes), one line "
      "with file:line:column; processes without CUDA untouched; on_invalid=warn -> job runs with the warnings")
