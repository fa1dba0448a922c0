#!/usr/bin/env python3
"""run_words.py CLI SHIM DIR: `cudashim run`'s options end at the job's first word, with or without
`--` (as nsys, heaptrack and docker do), against tests/cli/run_words.golden.

Before (issue 21): `cudashim run python3 -c 'print(1)'` failed with "The following argument was
not expected: -c"; `cudashim run echo --out x` made a folder ./x for its reports and ran `echo`;
`cudashim run python3 t.py --help` printed cudashim's help. A job that cannot be started exits
as it would from a shell (issue 37): 127 when nothing has its name, 126 when it is a folder or a
file without the execute bit (before: 127 for all three), and each such case is also run by
bash, whose status must be the same. Each case runs in an empty folder (a `models` subfolder and t.py);
the golden file holds its exit status, its stdout and the files it left there besides the reports.
UPDATE_GOLDEN=1 rewrites the golden file."""
import os
import subprocess
import sys
import tempfile

cli, shim, here = (os.path.abspath(a) for a in sys.argv[1:4])
env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}
env["CUDASHIM_LIB"] = shim
ARGV = "import sys; print(sys.argv[1:])"
CASES = [
    ["run", "--quiet", "python3", "-c", "print(1)"],
    ["run", "--quiet", "echo", "--out", "x"],
    ["run", "--quiet", "python3", "t.py", "--help", "-h", "--", "--quiet"],
    ["run", "--quiet", "--", "python3", "t.py", "--out", "y"],
    ["run", "--quiet", "--out", "reports", "python3", "t.py", "--version"],
    ["run", "--quiet", "sh", "-c", "exit 7"],
    ["run", "--quiet", "--", "--not-a-program"],
    ["run", "--quiet", "--", "./t.py"],
    ["run", "--quiet", "--", "./models"],
    ["run", "--quiet", "--", "models"],
]
LIKE_BASH = 3  # the last cases: the exit status bash gives the same command
out, unlike_bash = [], []
for i, args in enumerate(CASES):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "t.py"), "w") as f:
            f.write(ARGV + "\n")
        os.chmod(os.path.join(d, "t.py"), 0o644)
        os.mkdir(os.path.join(d, "models"))
        p = subprocess.run([cli, *args], capture_output=True, text=True, env=env, cwd=d, timeout=60)
        if i >= len(CASES) - LIKE_BASH:
            job = args[args.index("--") + 1:]
            b = subprocess.run(["bash", "-c", '"$@"', "bash", *job], capture_output=True, cwd=d, timeout=60)
            if b.returncode != p.returncode:
                unlike_bash.append(f"{' '.join(job)}: cudashim run exits {p.returncode}, bash {b.returncode}")
        left = sorted(n for n in os.listdir(d) if n not in ("t.py", "models", "cudashim-runs", "reports"))
        stderr = "".join(l + "\n" for l in p.stderr.splitlines() if l.startswith("cudashim run"))
        out.append(f"$ cudashim {' '.join(args)}\nexit {p.returncode}\n--- stdout\n{p.stdout}--- cudashim's stderr\n"
                   f"{stderr}--- files left besides the reports: {left}\n")
got = "\n".join(out)
golden = os.path.join(here, "run_words.golden")
if os.environ.get("UPDATE_GOLDEN"):
    open(golden, "w").write(got)
want = open(golden).read()
if unlike_bash:
    print("FAIL: not the exit status a shell gives:\n  " + "\n  ".join(unlike_bash))
    sys.exit(1)
if got != want:
    import difflib
    print("FAIL: output differs from run_words.golden:\n" + "".join(difflib.unified_diff(
        want.splitlines(True), got.splitlines(True), "run_words.golden", "got")))
    sys.exit(1)
print(f"ok: {len(CASES)} command lines: the job's words are the job's")
