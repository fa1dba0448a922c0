#!/usr/bin/env python3
"""settings_env.py SHIM FAKECUDA_DIR PROG: the CUDASHIM_* environment of issue 21, item 6, through
the driver double.

Before this, CUDASHIM_MEM_CAP=8gib turned the cap off with one warning (the job ran uncapped) and
CUDASHIM_MEMCAP=8GiB was silently ignored. Now:
- a memory size's unit is matched without case: CUDASHIM_MEM_CAP=8gib is a cap of 8 GiB (the
  report's policy section says so);
- a value of an enforcement setting that does not parse stops the process at its first CUDA call,
  exit 78, with one line naming the variable (policy.on_invalid = fail, the default); with
  CUDASHIM_ON_INVALID=warn the job runs with one warning;
- an unknown CUDASHIM_* variable is one warning naming the closest setting;
- a process that never uses CUDA (bash) notices none of it: same exit code, stdout and stderr as
  without the shim, byte for byte (the node-wide rule)."""
import glob
import json
import os
import subprocess
import sys
import tempfile

shim, fake, prog = sys.argv[1:4]
errs = []
base = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}


def run(cmd, extra, out):
    env = dict(base, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, **extra)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)


def shim_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("cudashim[")]


NO_CUDA = ["bash", "-c", "echo step1; echo err >&2; exit 3"]
plain = subprocess.run(NO_CUDA, env=base, capture_output=True, text=True, timeout=60)

cases = [
    # (what, environment, expected exit, the shim's lines expected (substrings, in order))
    ("CUDASHIM_MEM_CAP=8gib is 8 GiB", {"CUDASHIM_MEM_CAP": "8gib"}, 0, []),
    ("CUDASHIM_MEM_CAP=8gibs stops", {"CUDASHIM_MEM_CAP": "8gibs"}, 78,
     ["error: invalid setting: CUDASHIM_MEM_CAP='8gibs' is not valid: use a number of bytes with a unit",
      ]),
    ("CUDASHIM_MANAGED=dney stops", {"CUDASHIM_MANAGED": "dney"}, 78,
     ["error: invalid setting: CUDASHIM_MANAGED='dney' is not valid: use allow, warn, deny; stopping at the first "
      "CUDA call (exit 78) rather than run without the limit: fix or unset CUDASHIM_MANAGED, or set "
      "policy.on_invalid = \"warn\" (CUDASHIM_ON_INVALID=warn)"]),
    ("CUDASHIM_POOL_MAX_CACHED=lots stops", {"CUDASHIM_POOL_MAX_CACHED": "lots"}, 78,
     ["error: invalid setting: CUDASHIM_POOL_MAX_CACHED='lots' is not valid"]),
    ("CUDASHIM_MEM_CAP=8gibs, CUDASHIM_ON_INVALID=warn runs", {"CUDASHIM_MEM_CAP": "8gibs", "CUDASHIM_ON_INVALID": "warn"},
     0, ["warning: CUDASHIM_MEM_CAP: CUDASHIM_MEM_CAP='8gibs' is not valid: use a number of bytes with a unit"]),
    ("CUDASHIM_MEMCAP=8GiB is one warning", {"CUDASHIM_MEMCAP": "8GiB"}, 0,
     ["warning: CUDASHIM_MEMCAP: not a cudashim setting, ignored; did you mean CUDASHIM_MEM_CAP? (`cudashim options` "
      "lists them)"]),
    ("CUDASHIM_LIB is cudashim's own, no warning", {"CUDASHIM_LIB": shim}, 0, []),
]
for what, extra, code, want in cases:
    with tempfile.TemporaryDirectory() as out:
        p = run([prog, "procaddr", "3"], extra, out)
        lines = shim_lines(p.stderr)
        if p.returncode != code:
            errs.append(f"{what}: exit {p.returncode}, expected {code}: {p.stderr[-400:]!r}")
        if len(lines) != len(want) or any(w not in l for w, l in zip(want, lines)):
            errs.append(f"{what}: the shim's lines {lines}, expected {want}")
        if code == 78 and "expect_calls" in p.stdout:
            errs.append(f"{what}: the job got past its first CUDA call: {p.stdout!r}")
        if code == 0:
            reports = glob.glob(os.path.join(out, "cudashim-*.json"))
            if len(reports) != 1:
                errs.append(f"{what}: {len(reports)} reports")
            elif extra.get("CUDASHIM_MEM_CAP") == "8gib":
                pol = json.load(open(reports[0]))["policy"]
                if pol.get("mem_cap") != str(8 << 30):
                    errs.append(f"{what}: the report's policy says mem_cap {pol.get('mem_cap')!r}, expected {8 << 30}")
        # The same environment, a process that never uses CUDA: nothing changes.
        q = run(NO_CUDA, extra, out)
        if (q.returncode, q.stdout, q.stderr) != (plain.returncode, plain.stdout, plain.stderr):
            errs.append(f"{what}: bash without CUDA changed: exit {q.returncode}, stdout {q.stdout!r}, stderr {q.stderr!r}")
for e in errs:
    print("FAIL: " + e)
if errs:
    sys.exit(1)
print(f"ok: {len(cases)} environments: units without case, enforcement values stop (exit 78) or warn under "
      "on_invalid=warn, unknown variables warned about with the closest name; bash without CUDA untouched by all")
