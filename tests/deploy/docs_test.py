#!/usr/bin/env python3
"""docs_test.py REPO: docs/deploy.md names every file of deploy/, and its way of finding the
library in a virtual environment prints the wheel's path (cudashim/_lib/libcudashim.so
inside the package) without importing the package."""
import os
import re
import subprocess
import sys
import tempfile

repo = sys.argv[1]
failures = []


def check(name, cond, detail=""):
    print(f"{'ok' if cond else 'FAIL'}: {name}{'' if cond else ': ' + detail}")
    if not cond:
        failures.append(name)


with open(os.path.join(repo, "docs/deploy.md")) as f:
    doc = f.read()
for dirpath, _, files in os.walk(os.path.join(repo, "deploy")):
    for n in files:
        rel = os.path.relpath(os.path.join(dirpath, n), repo)
        check(f"docs/deploy.md names {rel}", rel in doc or f"../{rel}" in doc)

m = re.search(r"^(CUDASHIM_LIB=\$\(python3 -c '.*'\))$", doc, re.M)
if check("docs/deploy.md shows how to find the library in a virtual environment", m is not None):
    with tempfile.TemporaryDirectory() as tmp:
        pkg = os.path.join(tmp, "site", "cudashim")
        os.makedirs(os.path.join(pkg, "_lib"))
        with open(os.path.join(pkg, "__init__.py"), "w") as f:
            f.write("raise SystemExit('imported')\n")
        open(os.path.join(pkg, "_lib", "libcudashim.so"), "w").close()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": os.path.join(tmp, "site")}
        p = subprocess.run(["sh", "-c", m.group(1) + '; printf "%s\\n" "$CUDASHIM_LIB"'], env=env, capture_output=True, text=True)
        want = os.path.join(pkg, "_lib", "libcudashim.so")
        check("it prints the library's path, without running the package", p.stdout.strip() == want and p.returncode == 0,
              f"{p.stdout!r} {p.stderr!r}")

if failures:
    print(f"FAIL: {len(failures)} check(s): {failures}")
    sys.exit(1)
print("ok: docs/deploy.md covers deploy/ and its recipe for the library's path works")
