#!/usr/bin/env python3
"""example_on_gpu.py CLI EXAMPLE: the bundled example under `cudashim run` on a real
GPU: its habits must come back as findings (allocator churn, the per-step read-back,
the explicit sync in the loop). Exits 77 (CTest: skipped) when this machine has no
CUDA device or driver."""
import glob
import json
import os
import subprocess
import sys
import tempfile

cli, example = sys.argv[1:3]
with tempfile.TemporaryDirectory() as out:
    p = subprocess.run([cli, "run", "--quiet", "--out", out, "--", example, "100"], capture_output=True, text=True,
                       timeout=300)
    if "no CUDA device or driver" in p.stdout:
        print("skipped: no CUDA device or driver on this machine")
        sys.exit(77)
    reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json")) if not f.endswith("-crash.json")]
    ids = {f["id"] for r in reps for f in r["findings"]}
    want = {"alloc.churn-after-warmup", "sync.explicit-in-loop"}
    if p.returncode != 0 or not want <= ids:
        print(f"FAIL: exit {p.returncode}; findings {sorted(ids)}, expected at least {sorted(want)}\n{p.stdout}{p.stderr}")
        sys.exit(1)
    print(f"ok: findings {sorted(ids)}")
