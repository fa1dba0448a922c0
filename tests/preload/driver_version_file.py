#!/usr/bin/env python3
"""driver_version_file.py SHIM FAKECUDA_DIR PROG: CUDASHIM_DRIVER_VERSION_FILE names the kernel
module's version file the live driver-bridge check reads (a container may see the host's
elsewhere). The process loads a libcuda whose file name says 550.54.14 while the named file
says the kernel module is 535.104.05: the report has driver.user-kernel-mismatch with that
file as its evidence. An empty value is not a path: one warning names the variable and the
default file is read instead."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

shim, fake, prog = sys.argv[1:4]
errs = []
with tempfile.TemporaryDirectory() as d:
    shutil.copy(os.path.join(fake, "libcuda.so.1"), os.path.join(d, "libcuda.so.550.54.14"))
    os.symlink("libcuda.so.550.54.14", os.path.join(d, "libcuda.so.1"))
    version = os.path.join(d, "version")
    with open(version, "w") as f:
        f.write("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n")

    def run(value, out):
        os.mkdir(out)
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=f"{d}:{fake}", CUDASHIM_OUT=out,
                   CUDASHIM_DRIVER_VERSION_FILE=value)
        p = subprocess.run([prog, "procaddr", "3"], env=env, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            errs.append(f"exit {p.returncode}: {p.stderr[-600:]}")
        reps = glob.glob(os.path.join(out, "cudashim-*.json"))
        return p.stderr, json.load(open(reps[0]))["library_findings"] if len(reps) == 1 else []

    stderr, findings = run(version, os.path.join(d, "named"))
    mismatch = [f for f in findings if f["id"] == "driver.user-kernel-mismatch"]
    if not mismatch or not mismatch[0]["evidence"] or not mismatch[0]["evidence"][0].startswith(version + ": "):
        errs.append(f"no driver.user-kernel-mismatch citing {version}: {findings}")
    stderr, findings = run("", os.path.join(d, "empty"))
    if stderr.count("CUDASHIM_DRIVER_VERSION_FILE=''") != 1:
        errs.append(f"an empty value must warn once, naming the variable: {stderr[-600:]}")
    if any(version in e for f in findings for e in f.get("evidence", [])):
        errs.append(f"an empty value still read {version}: {findings}")
for e in errs:
    print("FAIL: " + e)
if errs:
    sys.exit(1)
print("ok: CUDASHIM_DRIVER_VERSION_FILE steers the live driver-bridge check; an empty one warns and reads the default")
