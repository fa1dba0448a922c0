#!/usr/bin/env python3
"""policy_check.py CLI DIR: `cudashim policy check` against golden output."""
import os
import subprocess
import sys

cli, here = sys.argv[1], sys.argv[2]
env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}
fails = []
for case in ("good", "bad"):
    path = os.path.join(here, f"policy_{case}.toml")
    p = subprocess.run([cli, "policy", "check", path], capture_output=True, text=True, env=env, cwd=here)
    got = f"exit {p.returncode}\n--- stdout\n{p.stdout}--- stderr\n{p.stderr}".replace(here + "/", "")
    golden = os.path.join(here, f"policy_{case}.golden")
    if os.environ.get("UPDATE_GOLDEN"):
        open(golden, "w").write(got)
    want = open(golden).read()
    if got != want:
        fails.append(f"{case}: output differs from {golden}\n--- got\n{got}\n--- want\n{want}")
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else print("ok: policy check output matches the golden files") or 0)
