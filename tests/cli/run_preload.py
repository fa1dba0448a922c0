#!/usr/bin/env python3
"""run_preload.py CLI SHIM: `cudashim run` puts its library first in LD_PRELOAD, keeps the
job's own entries in order (':' and ' ' both separate them for ld.so) and drops any other
libcudashim.so already there (a TaskProlog's or an image's), so a process gets one shim."""
import os
import subprocess
import sys
import tempfile

cli, shim = sys.argv[1:3]
libm = "/lib/x86_64-linux-gnu/libm.so.6"
libz = "/lib/x86_64-linux-gnu/libz.so.1"
with tempfile.TemporaryDirectory() as d:
    other = os.path.join(d, "site", "cudashim", "lib", "libcudashim.so")
    os.makedirs(os.path.dirname(other))
    os.symlink(shim, other)
    env = dict(os.environ, LD_PRELOAD=f"{other}:{libm} {libz}")
    p = subprocess.run([cli, "run", "--out", os.path.join(d, "out"), "--", "sh", "-c", 'printf "%s\\n" "$LD_PRELOAD"'],
                       env=env, capture_output=True, text=True, timeout=60)
    got = p.stdout.strip().splitlines()[0] if p.stdout.strip() else ""
    want = f"{shim}:{libm}:{libz}"
    if p.returncode != 0 or got != want:
        print(f"FAIL: LD_PRELOAD in the job is {got!r}, expected {want!r} (exit {p.returncode}, stderr {p.stderr!r})")
        sys.exit(1)
print("ok: cudashim run preloads its own library first, once; the job's other entries follow in order")
