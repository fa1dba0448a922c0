#!/usr/bin/env python3
"""descriptors.py SHIM FAKECUDA_DIR FD_THEFT: the shim never uses a descriptor the program took back.

tests/progs/fd_theft closes every inherited descriptor after its first CUDA call (as daemons
do) and reuses the numbers for its own data file and a pipe; the shim's event stream and its
wake-up must not follow the numbers (issue 22, item 2). Required, with the shim:
- the program reads back all 16 bytes it put into its pipe (the shim read none of them);
- its data file holds exactly what it wrote (no event-stream line in it);
- the report is written at exit and counts all 101 allocations (not early, on a wake-up
  that was the program's pipe);
- the event stream goes on in its own file (reopened by its path) up to its exit line,
  and one warning line says so;
- every descriptor the shim opened is close-on-exec.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

shim, fake, prog = sys.argv[1:4]
errors = []
with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as work:
    data = os.path.join(work, "data.txt")
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="warn")
    p = subprocess.run([prog, data], env=env, capture_output=True, text=True, timeout=60)
    got = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 and p.stdout.strip() else {}
    if p.returncode != 0:
        errors.append(f"exit {p.returncode}: {p.stderr[-1000:]}")
    if got.get("pipe_read") != 16:
        errors.append(f"the program read back {got.get('pipe_read')} of the 16 bytes in its pipe")
    content = open(data, "rb").read() if os.path.exists(data) else b""
    if content != b"the program's own data\n":
        errors.append(f"the program's data file holds {len(content)} bytes, not its own 23: {content[:200]!r}")
    if got.get("inheritable", 0) != 0:
        errors.append(f"{got['inheritable']} descriptors without FD_CLOEXEC after the first CUDA call")
    reports = [f for f in glob.glob(os.path.join(out, "cudashim-*.json")) if not f.endswith("-crash.json")]
    allocs = json.load(open(reports[0]))["api"].get("cuMemAlloc_v2", {}).get("calls", 0) if len(reports) == 1 else 0
    if allocs != 101:
        errors.append(f"the report counts {allocs} of 101 allocations ({reports})")
    streams = glob.glob(os.path.join(out, "*.ndjson"))
    types = []
    if len(streams) == 1:
        try:
            types = [json.loads(line)["type"] for line in open(streams[0])]
        except ValueError as e:
            errors.append(f"the event stream is not NDJSON: {e}")
    if not types or types[-1] != "exit" or types.count("snapshot") < 2:
        errors.append(f"the event stream did not go on to its exit line: {types[-4:]}")
    warns = [l for l in p.stderr.splitlines() if "event stream" in l and "descriptor" in l]
    if len(warns) != 1:
        errors.append(f"expected one warning line about the stream's descriptor, got {warns}")
    print(f"pipe read back {got.get('pipe_read')}/16, data file {len(content)} bytes (23 its own), "
          f"report {allocs}/101 allocations, stream {len(types)} lines ending {types[-1:] }, warnings {warns}")
for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: the program's descriptors stay its own; the stream reopened by its path")
sys.exit(1 if errors else 0)
