#!/usr/bin/env python3
"""non_utf8.py SHIM FAKECUDA_DIR PROG CLI SCHEMA: a process whose argv and executable path
are not UTF-8 still gets a report, a trace and a stream that are valid JSON.

A file name or an argument is bytes; JSON is UTF-8 (RFC 8259, section 8.1), and one stray
byte made every strict parser (Python's json, nlohmann, so `cudashim report` too) refuse
the whole report: the run was lost. PROG (tests/progs/sync_rules, mode readback: a finding
whose call site is a native frame of the program itself) is copied to a folder and a name
that are not UTF-8 and run with arguments that are not either: every output must parse with
Python's strict json, each byte outside UTF-8 must read as the text \\xNN (so the original
bytes come back), the report must match SCHEMA, and `cudashim report` (text and --json) must
read it without a warning.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

shim, fake, prog, cli, schema = sys.argv[1:6]
errors = []
# One of each: Latin-1 é, a byte never in UTF-8, a lone continuation byte, a cut sequence,
# an overlong '/', a surrogate, and valid UTF-8 (é, €) that must pass unchanged.
FOLDER = b"caf\xe9-\xff"
EXE = b"sync\x80rules-\xc3-\xc3\xa9"
ARGS = [b"readback", b"arg-\xfe\xc0\xaf-\xed\xa0\x80", b"\xe2\x82\xac ok"]


def bytes_back(text):
    """The bytes a \\xNN-escaped string stands for (the inverse of recorder/utf8.h)."""
    return re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), text.encode())


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "out")
    os.mkdir(out)
    folder = os.path.join(os.fsencode(tmp), FOLDER)
    os.mkdir(folder)
    exe = os.path.join(folder, EXE)
    shutil.copy(prog, exe)
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="error",
               FAKECUDA_SYNC_DELAY_US="100")
    p = subprocess.run([exe, *ARGS], env=env, capture_output=True, timeout=120)
    files = sorted(glob.glob(os.path.join(out, "cudashim-*")))
    kinds = sorted(os.path.splitext(f)[1] for f in files)
    if p.returncode != 0 or kinds != [".json", ".ndjson", ".trace"]:
        errors.append(f"run: exit {p.returncode}, files {kinds}: {p.stderr[-400:]}")
    report = None
    for f in files:
        raw = open(f, "rb").read()
        try:
            text = raw.decode("utf-8")  # strict: one stray byte fails here
            docs = [json.loads(line) for line in text.splitlines()] if f.endswith(".ndjson") else [json.loads(text)]
        except ValueError as e:
            errors.append(f"{os.path.basename(f)}: not valid UTF-8 JSON: {e}")
            continue
        print(f"{os.path.basename(f)}: {len(raw)} bytes, valid JSON ({len(docs)} document(s))")
        if f.endswith(".json"):
            report = docs[0]
    if report:
        proc = report["process"]
        if bytes_back(proc["exe"]) != os.path.realpath(exe):
            errors.append(f"process.exe {proc['exe']!r} does not give back {os.path.realpath(exe)!r}")
        if [bytes_back(a) for a in proc["argv"]] != [exe, *ARGS]:
            errors.append(f"process.argv {proc['argv']!r} does not give back {ARGS!r}")
        if "caf\\xe9-\\xff" not in proc["exe"] or "\\xc3-\u00e9" not in proc["exe"]:
            errors.append(f"process.exe {proc['exe']!r}: the bytes are not written as \\xNN, or valid UTF-8 was changed")
        sites = [s["where"] for f in report["findings"] for s in f["sites"]]
        print(f"process.exe: {proc['exe']}\nprocess.argv: {proc['argv']}\nsites: {sites}")
        v = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hygiene",
                                                         "check_report_schema.py"), schema, *glob.glob(os.path.join(out, "*.json"))],
                           capture_output=True, text=True)
        if v.returncode != 0:
            errors.append(f"the report does not match the schema:\n{v.stdout}")
    r = subprocess.run([cli, "report", out], capture_output=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))
    summary = r.stdout.decode("utf-8", "replace")
    # the call site's frame names the program by its recorded (escaped) path: report finds the file
    if r.returncode != 0 or r.stderr or "caf\\xe9-\\xff" not in summary or "sync.scalar-readback" not in summary or \
            "gone since the run" in summary:
        errors.append(f"cudashim report: exit {r.returncode}:\n{summary}{r.stderr.decode(errors='replace')}")
    print(summary, end="")
    j = subprocess.run([cli, "report", "--json", out], capture_output=True, timeout=120)
    try:
        merged = json.loads(j.stdout.decode("utf-8"))
        if j.returncode != 0 or len(merged["processes"]) != 1:
            errors.append(f"cudashim report --json: exit {j.returncode}, {len(merged['processes'])} processes")
    except ValueError as e:
        errors.append(f"cudashim report --json: not valid JSON: {e}")
for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: argv and executable path outside UTF-8: report, trace and stream are valid JSON, the bytes as \\xNN")
sys.exit(1 if errors else 0)
