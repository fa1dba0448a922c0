#!/usr/bin/env python3
"""usage.py CLI DIR [CUDA_VERSION SOURCE_DIR]: cudashim's usage errors, help and version against
tests/cli/usage.golden (the full output of each command line, its exit status included).

Before (issue 21): a typo (`cudashim doctr`) said "A subcommand is required" with no suggestion
and exited 106 or 109, which a script cannot tell from a job's own status; `cudashim help doctor`
said "paths is required"; `--version` printed "0.1.0" only. Now every usage error is one line on
stderr, exit 2, with the closest name when one is close; `help CMD` is the command's help; and
`--version` names the build's commit and the CUDA headers (checked against git describe and the
cuda.h of the build when given). UPDATE_GOLDEN=1 rewrites the golden file."""
import os
import re
import subprocess
import sys

cli, here = sys.argv[1], sys.argv[2]
env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}
CASES = [
    ["doctr"],
    ["reprot", "x"],
    ["rep"],
    [],
    ["--verison"],
    ["run", "--ouy", "x", "true"],
    ["run"],
    ["run", "--out"],
    ["report"],
    ["report", "--json=1", "x"],
    ["report", "--jsno", "x"],
    ["hooks", "extra"],
    ["policy"],
    ["policy", "chek", "f.toml"],
    ["policy", "check"],
    ["policy", "check", "a.toml", "b.toml"],
    ["doctor", "--jobs", "many", "x"],
    ["completion", "fish"],
    ["completion"],
    ["help", "doctr"],
    ["help", "doctor"],
    ["doctor", "--help"],
    ["help", "run"],
    ["help", "policy"],
    ["policy", "check", "-h"],
    ["--help"],
]
out = []
for args in CASES:
    p = subprocess.run([cli, *args], capture_output=True, text=True, env=env, cwd=here)
    out.append(f"$ cudashim {' '.join(args)}\nexit {p.returncode}\n--- stdout\n{p.stdout}--- stderr\n{p.stderr}")
    if p.returncode == 2 and (len(p.stderr.splitlines()) != 1 or p.stdout):
        print(f"FAIL: cudashim {' '.join(args)}: a usage error is one line on stderr and nothing on stdout")
        sys.exit(1)
got = "\n".join(out)
golden = os.path.join(here, "usage.golden")
if os.environ.get("UPDATE_GOLDEN"):
    open(golden, "w").write(got)
want = open(golden).read()
fails = []
if got != want:
    import difflib
    fails.append("output differs from usage.golden:\n" + "".join(difflib.unified_diff(
        want.splitlines(True), got.splitlines(True), "usage.golden", "got")))

v = subprocess.run([cli, "--version"], capture_output=True, text=True, env=env)
m = re.fullmatch(r"cudashim (\S+) \(commit (\S+); built against CUDA (\d+)\.(\d+) headers, CUDA_VERSION (\d+)\)\n", v.stdout)
if v.returncode != 0 or not m:
    fails.append(f"--version: exit {v.returncode}, {v.stdout!r}")
elif len(sys.argv) > 4:
    cuda, src = sys.argv[3], sys.argv[4]
    if m.group(5) != cuda or int(m.group(3)) != int(cuda) // 1000:
        fails.append(f"--version names CUDA_VERSION {m.group(5)}, the build's cuda.h says {cuda}")
    d = subprocess.run(["git", "-C", src, "describe", "--always", "--dirty", "--tags"], capture_output=True, text=True)
    # The build ran git describe when it was built (a later edit or commit changes it since): in a
    # git tree it is a describe, outside one "unknown".
    if (m.group(2) == "unknown") != (d.returncode != 0):
        fails.append(f"--version: commit {m.group(2)!r}, while git describe of {src} says {d.stdout.strip()!r}")
if m and not re.fullmatch(r"unknown|[0-9A-Za-z._/+-]+", m.group(2)):
    fails.append(f"--version: commit {m.group(2)!r} is neither git describe nor 'unknown'")
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else print(f"ok: {len(CASES)} command lines match usage.golden; --version: {v.stdout.strip()}") or 0)
