#!/usr/bin/env python3
"""policy_invalid.py SHIM FAKECUDA_DIR PROG: a malformed policy stops the job with
exit 78 before any CUDA call, naming file:line:column; on_invalid = "warn" lets it run."""
import os
import subprocess
import sys
import tempfile

shim, fake, prog = sys.argv[1:4]
with tempfile.TemporaryDirectory() as d:
    bad = os.path.join(d, "bad.toml")
    with open(bad, "w") as f:
        f.write('[memory]\ncap = "8GiB"\nmanaged = "sometimes"\n')
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=d, CUDASHIM_POLICY=bad)
    p = subprocess.run([prog, "procaddr", "3"], env=env, capture_output=True, text=True, timeout=60)
    errs = []
    if p.returncode != 78:
        errs.append(f"exit code {p.returncode}, expected 78")
    if f"{bad}:3:11: memory.managed='sometimes' is not valid" not in p.stderr:
        errs.append(f"stderr does not name {bad}:3:11: {p.stderr!r}")
    if p.stdout:
        errs.append(f"the program ran (stdout {p.stdout!r}): it must stop before any CUDA work")
    with open(bad, "a") as f:
        f.write('[policy]\non_invalid = "warn"\n')
    p2 = subprocess.run([prog, "procaddr", "3"], env=env, capture_output=True, text=True, timeout=60)
    if p2.returncode != 0 or "expect_calls" not in p2.stdout:
        errs.append(f"with on_invalid = warn the job must run: exit {p2.returncode}, stderr {p2.stderr!r}")
    if "warning: invalid policy" not in p2.stderr:
        errs.append(f"with on_invalid = warn a warning must say what was ignored: {p2.stderr!r}")
    for e in errs:
        print("FAIL: " + e)
    if errs:
        sys.exit(1)
    print("ok: malformed policy -> exit 78 with file:line:column; on_invalid=warn -> job runs with a warning")
