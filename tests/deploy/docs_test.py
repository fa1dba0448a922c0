#!/usr/bin/env python3
"""docs_test.py REPO: docs/deploy.md names every file of deploy/, and its way of finding the
library of a wheel installed into a virtual environment prints the package's
cudashim/lib/libcudashim.so (run here against the package's source, python/cudashim)."""
import os
import re
import subprocess
import sys

repo = os.path.abspath(sys.argv[1])
failures = []


def check(name, cond, detail=""):
    print(f"{'ok' if cond else 'FAIL'}: {name}{'' if cond else ': ' + detail}")
    if not cond:
        failures.append(name)
    return cond


with open(os.path.join(repo, "docs/deploy.md")) as f:
    doc = f.read()
for dirpath, _, files in os.walk(os.path.join(repo, "deploy")):
    for n in files:
        rel = os.path.relpath(os.path.join(dirpath, n), repo)
        check(f"docs/deploy.md names {rel}", rel in doc or f"../{rel}" in doc)

m = re.search(r"^(CUDASHIM_LIB=\$\(python3 -c '.*'\))$", doc, re.M)
if check("docs/deploy.md shows how to find the library in a virtual environment", m is not None):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": os.path.join(repo, "python")}
    p = subprocess.run(["sh", "-c", m.group(1) + '; printf "%s\\n" "$CUDASHIM_LIB"'], env=env, capture_output=True, text=True)
    want = os.path.join(repo, "python", "cudashim", "lib", "libcudashim.so")
    check("it prints the package's lib/libcudashim.so", p.stdout.strip() == want and p.returncode == 0, f"{p.stdout!r} {p.stderr!r}")

if failures:
    print(f"FAIL: {len(failures)} check(s): {failures}")
    sys.exit(1)
print("ok: docs/deploy.md covers deploy/ and its recipe for the library's path works")
