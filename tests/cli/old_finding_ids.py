#!/usr/bin/env python3
"""old_finding_ids.py CLI DIR: `cudashim report` on a report written before the one findings
table (catalog/findings.def).

DIR/old_ids_report.json is the report the shim of commit 57764d0 wrote for
tests/progs/live_inventory (paths under /src/cudashim): its library findings carry the old
ids (driver-too-old, mixed-majors-in-process, ...). The summary and --json must show them by
today's ids (driver.too-old, library.mixed-majors-in-process, ...) and never by the old
ones; an id no row knows is shown as written; `cudashim findings` lists each old id with
the row it now names.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

cli, here = sys.argv[1:3]
NEW = {"mixed-majors-in-process": "library.mixed-majors-in-process", "driver-too-old": "driver.too-old",
       "driver-minor-compat": "driver.minor-compat", "env-jit-cache-disabled": "env.jit-cache-disabled",
       "module-ptx-jit": "module.ptx-jit"}
errors = []
env = dict(os.environ, NO_COLOR="1")
with tempfile.TemporaryDirectory() as out:
    saved = os.path.join(out, "cudashim-vm-31666.json")
    shutil.copy(os.path.join(here, "old_ids_report.json"), saved)
    old_ids = [f["id"] for f in json.load(open(saved))["library_findings"]]
    if set(old_ids) != set(NEW):
        errors.append(f"the saved report's library findings are {old_ids}, not the old ids this test maps")

    p = subprocess.run([cli, "report", saved], capture_output=True, text=True, env=env)
    text = p.stdout
    for old, new in NEW.items():
        if not re.search(rf"^  {re.escape(new)} +(error|warning|info): ", text, re.M):
            errors.append(f"the summary has no line for {new} (was {old})")
        if re.search(rf"(?<![\w.-]){re.escape(old)}(?![\w-])", text):
            errors.append(f"the summary still names the old id {old}")
    if p.returncode != 0:
        errors.append(f"cudashim report: exit {p.returncode}: {p.stderr}")
    print(text, end="")

    merged = json.loads(subprocess.run([cli, "report", "--json", saved], capture_output=True, text=True).stdout)
    ids = [f["id"] for f in merged["processes"][0]["library_findings"]]
    if ids != [NEW[i] for i in old_ids]:
        errors.append(f"--json: library_findings ids {ids}, expected {[NEW[i] for i in old_ids]}")

    # An id that is no row's old id or id is left as the report wrote it.
    doc = json.load(open(saved))
    doc["library_findings"][0]["id"] = "site.custom-check"
    json.dump(doc, open(saved, "w"))
    text = subprocess.run([cli, "report", saved], capture_output=True, text=True, env=env).stdout
    if not re.search(r"^  site\.custom-check +error: ", text, re.M):
        errors.append(f"an unknown id was not shown as written:\n{text}")

listing = subprocess.run([cli, "findings"], capture_output=True, text=True).stdout
markdown = subprocess.run([cli, "findings", "--markdown"], capture_output=True, text=True).stdout
for old, new in NEW.items():
    if not re.search(rf"^{re.escape(new)} .*\n    fix: .*\n    old id: {re.escape(old)}$", listing, re.M):
        errors.append(f"`cudashim findings` does not list {new} with its old id {old}")
    if f"| `{old}` | `{new}` |" not in markdown:
        errors.append(f"`cudashim findings --markdown` has no alias row {old} -> {new}")
for e in errors:
    print("FAIL: " + e)
print("ok: a report with the old finding ids shows them by today's ids" if not errors else "")
sys.exit(1 if errors else 0)
