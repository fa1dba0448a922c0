#!/usr/bin/env python3
"""unknown_finding_ids.py CLI FIXTURE: `cudashim report` keeps a finding it has no row for.

The reader parses every finding of a report (findings[], library_findings[],
gpu_time.findings[]) into the one Finding of catalog/findings.h. A report written by a newer
cudashim may carry an id this build does not know, and one written before the one findings
table an old alias ("driver-too-old"). Neither may be lost: the summary and the HTML page
show an unknown id by its text, with the severity and the fix the report says, and an alias
by today's id; --json keeps the unknown id as written.

FIXTURE is tests/cli/summary_fixture/saved-cudashim-vm-2181.json (a real report with a sync
finding, library findings and a sampled GPU); its findings are renamed here.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

cli, fixture = sys.argv[1:3]
errors = []
env = dict(os.environ, NO_COLOR="1")

doc = json.load(open(fixture))
sync = doc["findings"][0]
sync.update(id="sync.from-the-future", severity="error", fix="upgrade the future habit", also=["sync.also-unknown"])
doc["library_findings"] = [
    {"id": "driver-too-old", "severity": "error", "title": "t", "message": "the driver is older than the runtime",
     "evidence": [], "fix": "update the driver"},
    {"id": "library.newer-check", "severity": "info", "title": "t", "message": "a check of a newer cudashim",
     "evidence": [], "fix": "read the newer docs"},
    # No severity at all: an unknown id is a warning, never a crash.
    {"id": "library.no-severity", "message": "no severity written", "fix": "nothing"},
]
doc["gpu_time"]["findings"] = [
    {"id": "gpu.future-idle", "severity": "warning", "device": 0, "title": "the GPU idled in a new way",
     "message": "", "fix": "overlap the new way", "diagnosis": "future-bound"},
]

with tempfile.TemporaryDirectory() as out:
    path = os.path.join(out, "cudashim-vm-2181.json")
    json.dump(doc, open(path, "w"))
    page = os.path.join(out, "page.html")

    p = subprocess.run([cli, "report", "--html", page, path], capture_output=True, text=True, env=env)
    text = p.stdout
    if p.returncode != 0:
        errors.append(f"cudashim report: exit {p.returncode}: {p.stderr}")
    want_summary = [
        (r"^  sync\.from-the-future +80 calls +54\.0 ms blocked  at \S*dataloader_workers\.py:41 .*\(also sync\.also-unknown\)$",
         "the unknown sync finding with its calls, site and also"),
        (r"^  driver\.too-old +error: the driver is older than the runtime$", "the old alias by today's id"),
        # Info findings are counted in one line without --verbose (the summary fits one screen):
        # the unknown id is named there by its text.
        (r"^  1 info finding \(library\.newer-check: --verbose lists them\)$", "the unknown library finding, info as written"),
        (r"^  library\.no-severity +warning: no severity written$", "the unknown id without a severity, as a warning"),
        (r"^  warning: \[gpu\.future-idle\] device 0: the GPU idled in a new way \(future-bound\)\n    fix: overlap the new way$",
         "the unknown GPU-time finding with its title, diagnosis and fix"),
    ]
    for pattern, what in want_summary:
        if not re.search(pattern, text, re.M):
            errors.append(f"the summary lacks {what} ({pattern})")
    if re.search(r"(?<![\w.-])driver-too-old(?![\w-])", text):
        errors.append("the summary still names the old id driver-too-old")

    html = open(page).read() if os.path.exists(page) else ""
    want_page = [
        (r'<tr class="site" data-pid="2181" data-finding="sync\.from-the-future"[^>]*>.*?<td class="error">error</td>'
         r'<td>sync\.from-the-future.*?also sync\.also-unknown.*?<td>upgrade the future habit</td></tr>',
         "the unknown sync finding's row, its severity, also and fix"),
        (r'<tr class="library-finding" data-pid="2181" data-finding="driver\.too-old">.*?<td class="error">error</td>',
         "the old alias's row by today's id"),
        (r'<tr class="library-finding" data-pid="2181" data-finding="library\.newer-check">.*?<td class="info">info</td>'
         r'.*?<td>read the newer docs</td>', "the unknown library finding's row with its fix"),
        (r'<span class="sev warning">gpu\.future-idle</span> warning: the GPU idled in a new way<br>'
         r'<span class="muted">fix: overlap the new way</span>', "the unknown GPU-time finding in the GPU table"),
    ]
    for pattern, what in want_page:
        if not re.search(pattern, html, re.S):
            errors.append(f"the HTML page lacks {what} ({pattern})")
    # The findings card: the unknown error, the alias's error and the severity-less warning; one info.
    if 'id="card-findings"><b>3</b><span>warnings, and 1 info</span>' not in html:
        errors.append(f"the findings card is {re.findall(r'id=.card-findings.>(.*?)</div>', html)}, expected 3 warnings, 1 info")

    merged = json.loads(subprocess.run([cli, "report", "--json", path], capture_output=True, text=True).stdout)
    proc = merged["processes"][0]
    if [f["id"] for f in proc["findings"]] != ["sync.from-the-future"]:
        errors.append(f"--json findings ids {[f['id'] for f in proc['findings']]}")
    if [f["id"] for f in proc["library_findings"]] != ["driver.too-old", "library.newer-check", "library.no-severity"]:
        errors.append(f"--json library_findings ids {[f['id'] for f in proc['library_findings']]}")

print(text, end="")
if errors:
    print("\n".join(["FAIL:"] + errors), file=sys.stderr)
    sys.exit(1)
print("ok: unknown ids and an old alias read and render in the summary, the page and --json")
