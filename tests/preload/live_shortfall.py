#!/usr/bin/env python3
"""live_shortfall.py SHIM FAKECUDA_DIR PROG OLD_NVJITLINK NEW_CUSPARSE

The versioned-symbol shortfall, live: NVIDIA's libnvJitLink 12.1 (PyPI wheel) is loaded
first, then libcusparse 12.2 (which needs nvJitLink >= 12.3) with lazy binding, so the
load succeeds and the first call would fail. The shim must log
[library.versioned-symbol-shortfall] while the job runs (before "MARK loaded"), naming the
missing __nvJitLink..._12_3 symbol and the loaded old file, and list it in the report.
The control: the real loader, asked for RTLD_NOW in the same order, refuses cuSPARSE on
a symbol of the same name.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

shim, fake, prog, old_jit, cusparse = sys.argv[1:6]
errors = []
if not (os.path.exists(old_jit) and os.path.exists(cusparse)):
    print(f"skip: {old_jit} or {cusparse} missing (scripts/setup.sh installs the wheels)")
    sys.exit(77)
with tempfile.TemporaryDirectory() as out:
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out)
    p = subprocess.run([prog, "now:" + old_jit, "lazy:" + cusparse], env=env, capture_output=True, text=True, timeout=60)
    lines = p.stderr.splitlines()
    mark = next((i for i, l in enumerate(lines) if "MARK loaded" in l), None)
    hit = next((i for i, l in enumerate(lines) if "[library.versioned-symbol-shortfall]" in l), None)
    if p.returncode != 0 or mark is None:
        errors.append(f"exit {p.returncode}: {p.stderr[-500:]}")
    elif hit is None or hit > mark:
        errors.append(f"no live [library.versioned-symbol-shortfall] line before the mark: {p.stderr[-800:]}")
    else:
        line = lines[hit]
        print(line[:300])
        sym = re.search(r"(__nvJitLink\w+_12_\d+)@", line)
        if not sym or os.path.basename(old_jit) not in line or os.path.dirname(old_jit) not in line:
            errors.append(f"the line does not name a versioned nvJitLink symbol and the old file: {line}")
        reps = glob.glob(os.path.join(out, "cudashim-*.json"))
        f = []
        if len(reps) != 1:
            errors.append(f"{len(reps)} reports")
        else:
            r = json.load(open(reps[0]))
            f = [x for x in r["library_findings"] if x["id"] == "library.versioned-symbol-shortfall"]
            if not f or f[0]["severity"] != "error" or os.path.realpath(cusparse) not in map(os.path.realpath, [f[0]["evidence"][-1].split(": ", 1)[-1], cusparse]):
                errors.append(f"report: {f}")
        # The control: the real loader with RTLD_NOW, same order, no shim.
        env2 = dict(os.environ, LD_LIBRARY_PATH=fake)
        q = subprocess.run([prog, "now:" + old_jit, "now:" + cusparse], env=env2, capture_output=True, text=True, timeout=60)
        failed_on = re.search(r"undefined symbol: (\w+), version libnvJitLink", q.stderr)
        named = " ".join([line] + (f[0]["evidence"] if reps and f else []))
        if q.returncode != 3 or not failed_on:
            errors.append(f"control: the real loader did not fail on an nvJitLink symbol: exit {q.returncode}: {q.stderr[-300:]}")
        elif failed_on.group(1) not in named:
            errors.append(f"the real loader fails on {failed_on.group(1)}, which the shim did not name: {named[:400]}")
        else:
            print("real loader (RTLD_NOW):", q.stderr.strip()[:200])
for e in errors:
    print("FAIL: " + e)
print("ok: shortfall seen live" if not errors else "")
sys.exit(1 if errors else 0)
