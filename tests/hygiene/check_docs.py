#!/usr/bin/env python3
"""check_docs.py CLI DOCS_DIR: docs/hooks.md, docs/options.md, docs/findings.md and docs/cli.md are what the tables
generate today (`scripts/gen_docs.py` rewrites them)."""
import subprocess
import sys

cli, docs = sys.argv[1], sys.argv[2]
sys.path.insert(0, docs + "/../scripts")
from gen_docs import render  # noqa: E402

bad = []
for name, text in render(cli).items():
    with open(f"{docs}/{name}") as f:
        if f.read() != text:
            bad.append(name)
if bad:
    print(f"FAIL: {bad} are stale: run scripts/gen_docs.py and commit the result")
    sys.exit(1)
print("ok: docs/hooks.md, docs/options.md, docs/findings.md and docs/cli.md match the tables")
