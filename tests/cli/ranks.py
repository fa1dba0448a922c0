#!/usr/bin/env python3
"""ranks.py CLI SHIM FAKECUDA_DIR REAL_CUDART CUDART13 CUDART129: two processes as two
ranks of one job (RANK=0, RANK=1), the second with another copy of a CUDA library
(the planted divergence: it loads the 12.9 runtime where rank 0 loads 13.0), under
`cudashim run`. Each leaves its own report (-r0, -r1); `cudashim report` names rank 1
and the library that differs; --json carries the same in rank_comparison. Each rank's
summary gives the driver's CUDA version (cuDriverGetVersion: the double answers 12.8 here)
and the runtime it loaded."""
import json
import os
import subprocess
import sys
import tempfile

cli, shim, fake, prog, rt13, rt129 = sys.argv[1:7]
errors = []
with tempfile.TemporaryDirectory() as out:
    for rank, rt in ((0, rt13), (1, rt129)):
        env = dict(os.environ, RANK=str(rank), LD_LIBRARY_PATH=fake, CUDASHIM_LIB=shim, CUDASHIM_TEST_HOOK_NAMES="/dev/null",
                   CUDASHIM_LOG_LEVEL="error", FAKECUDA_DRIVER_VERSION="12080")
        p = subprocess.run([cli, "run", "--quiet", "--out", out, "--", prog, rt], env=env, capture_output=True, text=True)
        if p.returncode != 0:
            errors.append(f"rank {rank}: exit {p.returncode}: {p.stderr[-300:]}")
    names = sorted(f for f in os.listdir(out) if f.endswith(".json"))
    if not (any(n.endswith("-r0.json") for n in names) and any(n.endswith("-r1.json") for n in names)):
        errors.append(f"per-rank reports missing: {names}")
    p = subprocess.run([cli, "report", out], capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
    text = p.stdout
    real129 = os.path.realpath(rt129)
    if "! rank 1 (libraries): loaded cudart " + real129 not in text:
        errors.append(f"the summary does not name rank 1 and {real129}:\n{text}")
    # What ran: each rank's driver as cuDriverGetVersion answered it (the double says 12.8 when
    # told to) and the CUDA runtime it loaded (driver.cuda_version, libraries[].version).
    host_lines = [l.strip() for l in text.splitlines() if l.strip().startswith("host ")]
    if sorted(l[l.find("(CUDA"):] for l in host_lines) != ["(CUDA 12.8), CUDA runtime 12.9", "(CUDA 12.8), CUDA runtime 13.0"]:
        errors.append(f"the summary does not give each rank's driver and runtime versions: {host_lines}")
    if "! rank 0" in text:
        errors.append(f"rank 0 is named though it matches the majority... of two: {text}")
    j = json.loads(subprocess.run([cli, "report", "--json", out], capture_output=True, text=True).stdout)
    div = j.get("rank_comparison", {}).get("divergences", [])
    if not any(d["rank"] == 1 and d["kind"] == "libraries" and real129 in d["what"] for d in div):
        errors.append(f"--json rank_comparison: {div}")
    print(text[text.find("ranks ("):])
for e in errors:
    print("FAIL: " + e)
print("ok: per-rank reports, and the report names the diverging rank and library" if not errors else "")
sys.exit(1 if errors else 0)
