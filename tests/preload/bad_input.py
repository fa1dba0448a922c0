#!/usr/bin/env python3
"""bad_input.py SHIM FAKECUDA_DIR PROG CLI: garbage in every CUDASHIM_* variable and
an output folder that cannot be used. The job always runs and keeps its own exit
code; a bad setting is one warning naming the variable; a bad folder is one warning.
The exception (issue 21): garbage in an enforcement setting (a cap, managed memory, the pool's
limits: `cudashim options --markdown` marks them) must not turn its limit off: the process stops
at its first CUDA call with exit 78 and one line naming the variable (policy.on_invalid =
fail, the default)."""
import os
import subprocess
import sys
import tempfile

shim, fake, prog, cli = sys.argv[1:5]
md = subprocess.run([cli, "options", "--markdown"], capture_output=True, text=True).stdout.splitlines()
types, enforced = {}, set()
for line in md:
    cells = [c.strip() for c in line.split("|")]
    if len(cells) > 7 and cells[1].startswith("`CUDASHIM_"):
        types[cells[1].strip("`")] = cells[3]
        if "enforcement" in cells[6]:
            enforced.add(cells[1].strip("`"))
if len(enforced) < 3:
    print(f"FAIL: only {sorted(enforced)} marked as enforcement settings in `cudashim options --markdown`")
    sys.exit(1)
names = sorted(types)
if len(names) < 10:
    print(f"FAIL: only {len(names)} settings read from `cudashim options --markdown`")
    sys.exit(1)
GARBAGE = ["\x01\x02garbage", "x" * 5000, "-1", "1e999GiB", "yes please", "\u00e9\u00e8", ""]
errors, runs = [], 0
for name in names:
    if name in ("CUDASHIM_POLICY", "CUDASHIM_DISABLE", "CUDASHIM_REPORT"):
        continue  # a policy path is a file (tested in policy tests); the flags turn reporting off on purpose
    for g in GARBAGE:
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="warn")
            env[name] = g
            try:
                p = subprocess.run([prog, "procaddr", "3"], env=env, capture_output=True, text=True, timeout=60,
                                   errors="replace")
            except ValueError:  # a NUL byte cannot be in the environment at all
                continue
            runs += 1
            if name in enforced and not (g == "" and types[name] == "memsize"):  # "" is "no limit" only for a size
                stops = [l for l in p.stderr.splitlines() if l.startswith("cudashim[")]
                if p.returncode != 78 or len(stops) != 1 or f"invalid setting: {name}=" not in stops[0]:
                    errors.append(f"{name}={g[:20]!r} (enforcement): expected exit 78 and one line naming it, got exit "
                                  f"{p.returncode}: {stops}")
                continue
            if p.returncode != 0 or "expect_calls" not in p.stdout:
                errors.append(f"{name}={g[:20]!r}: the job failed: exit {p.returncode}: {p.stderr[-300:]}")
            elif g and types[name] not in ("string", "path") and name not in p.stderr:
                # every garbage value is refused by a typed setting: one warning naming it
                errors.append(f"{name}={g[:20]!r} ({types[name]}): no warning naming the variable: {p.stderr[-200:]!r}")
for bad_out in ("/dev/null/reports", "/proc/version/x"):
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=bad_out)
    p = subprocess.run([prog, "procaddr", "3"], env=env, capture_output=True, text=True, timeout=60)
    runs += 1
    warnings = [l for l in p.stderr.splitlines() if "could not write the report" in l]
    if p.returncode != 0 or len(warnings) != 1 or bad_out not in warnings[0]:
        errors.append(f"CUDASHIM_OUT={bad_out}: exit {p.returncode}, warnings {warnings}")
# the job's own exit code survives
env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT="/dev/null/x")
p = subprocess.run(["sh", "-c", f"{prog} procaddr 3 >/dev/null; exit 7"], env=env, capture_output=True, text=True)
if p.returncode != 7:
    errors.append(f"exit code changed: {p.returncode}")
for e in errors:
    print("FAIL: " + e)
print(f"ok: {runs} runs with bad settings or folders; every job ran and kept its exit code" if not errors else "")
sys.exit(1 if errors else 0)
