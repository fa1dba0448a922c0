#!/usr/bin/env python3
"""nvml_cap.py SHIM FAKECUDA_DIR PROG: NVML's memory queries report the capped device.

Through the test doubles (a driver and libnvidia-ml whose device 0 share one PCI address,
80 GiB): without the shim NVML says 80 GiB; with CUDASHIM_MEM_CAP=1GiB and 256 MiB
allocated, both nvmlDeviceGetMemoryInfo and _v2 (looked up with dlsym, as pynvml and torch
do) say total 1 GiB, free 768 MiB at most, used = total - free (and reserved 0 for _v2: the
capped device is a virtual one with no driver reservation in it).
"""
import json
import os
import subprocess
import sys

shim, fake, prog = sys.argv[1:4]
GiB, MiB = 1 << 30, 1 << 20
errors = []
base = dict(os.environ, LD_LIBRARY_PATH=fake)
plain = subprocess.run([prog], env=base, capture_output=True, text=True, timeout=60)
capped = subprocess.run([prog], env=dict(base, LD_PRELOAD=shim, CUDASHIM_MEM_CAP="1GiB", CUDASHIM_REPORT="0"),
                        capture_output=True, text=True, timeout=60)
if plain.returncode or capped.returncode:
    errors.append(f"exit {plain.returncode}/{capped.returncode}: {plain.stderr[-300:]} {capped.stderr[-300:]}")
else:
    p, c = json.loads(plain.stdout), json.loads(capped.stdout)
    if p["v1"][0] != 80 * GiB:
        errors.append(f"without the shim: {p}")
    t, f, u = c["v1"]
    if t != GiB or f > GiB - 256 * MiB or u != t - f:
        errors.append(f"v1 not capped: {c['v1']}")
    t2, r2, f2, u2 = c["v2"]
    if t2 != GiB or f2 > GiB - 256 * MiB or r2 != 0 or u2 != t2 - f2:
        errors.append(f"v2 not capped: {c['v2']}")
    print(f"without the shim: {p}; with CUDASHIM_MEM_CAP=1GiB: {c}")
for e in errors:
    print("FAIL: " + e)
print("ok: NVML reports the cap" if not errors else "")
sys.exit(1 if errors else 0)
