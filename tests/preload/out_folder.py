#!/usr/bin/env python3
"""out_folder.py SHIM FAKECUDA_DIR: where one process's outputs go (issue 22.10).

  - A relative CUDASHIM_OUT two levels deep that does not exist, and a program that
    changes its current folder between its first CUDA call and its exit: the report, the
    stream and the trace all land in one folder, the one the path named at start-up, and
    every folder made for them is 0700. Before: only one missing level was created (every
    output lost), and with the folders there the stream went to the first folder and the
    report and trace to the second.
  - A file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) that the report fits in and the trace
    does not: the report is written and one warning line names the limit for the trace.
    Before: the trace was dropped without a word. (With SIGXFSZ at its default action:
    job_limits.py's fsize case.)
"""
import glob
import json
import os
import resource
import signal
import stat
import subprocess
import sys
import tempfile

shim, fake = sys.argv[1:3]
CHDIR_JOB = r"""
import ctypes, os, sys
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
os.chdir(sys.argv[1])
for _ in range(5):
    assert cuda.cuInit(0) == 0
"""
SYNC_JOB = r"""
import ctypes
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
for _ in range(3000):
    cuda.cuStreamSynchronize(None)
"""
errors = []


def env_for(out):
    env = dict(os.environ, LD_LIBRARY_PATH=fake, LD_PRELOAD=shim, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="warn")
    return env


with tempfile.TemporaryDirectory() as top:
    start, elsewhere = os.path.join(top, "start"), os.path.join(top, "elsewhere")
    os.makedirs(start)
    os.makedirs(elsewhere)
    p = subprocess.run([sys.executable, "-c", CHDIR_JOB, elsewhere], cwd=start, env=env_for("runs/today"),
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        errors.append(f"chdir: the job ended {p.returncode}: {p.stderr[-800:]}")
    want = os.path.join(start, "runs", "today")
    got = sorted(os.path.relpath(f, top) for f in glob.glob(os.path.join(top, "**", "cudashim-*"), recursive=True))
    kinds = sorted(os.path.splitext(f)[1] for f in got)
    if kinds != [".json", ".ndjson", ".trace"] or any(os.path.dirname(os.path.join(top, f)) != want for f in got):
        errors.append(f"chdir: outputs {got}, expected the three in {os.path.relpath(want, top)}")
    for d in (os.path.join(start, "runs"), want):
        if os.path.isdir(d) and stat.S_IMODE(os.stat(d).st_mode) != 0o700:
            errors.append(f"chdir: {os.path.relpath(d, top)} has mode {oct(stat.S_IMODE(os.stat(d).st_mode))}")
    print(f"relative CUDASHIM_OUT=runs/today, then chdir: {got}")

with tempfile.TemporaryDirectory() as out:
    limit = 64 * 1024

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    p = subprocess.run([sys.executable, "-c", SYNC_JOB], env=env_for(out), capture_output=True, text=True,
                       timeout=60, preexec_fn=limited)
    files = sorted(os.listdir(out))
    reports = [f for f in files if f.endswith(".json")]
    warned = [l for l in p.stderr.splitlines() if "could not write the trace" in l]
    if p.returncode != 0:
        errors.append(f"file-size limit: the job ended {p.returncode}: {p.stderr[-800:]}")
    if len(reports) != 1:
        errors.append(f"file-size limit: reports {reports} in {files}")
    else:
        json.load(open(os.path.join(out, reports[0])))
    if any(f.endswith(".trace") for f in files):
        errors.append(f"file-size limit: a {limit}-byte limit and still a trace: {files} (make the job larger)")
    if len(warned) != 1 or "file-size limit (ulimit -f)" not in warned[0]:
        errors.append(f"file-size limit: expected one warning about the trace, got {warned}; stderr: {p.stderr[-800:]}")
    if [f for f in files if ".tmp" in f]:
        errors.append(f"file-size limit: temporary files left: {files}")
    print(f"file-size limit {limit} bytes: {files}; warning: {warned}")
for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: one folder per process, made whole (0700); a trace that cannot be written is said")
sys.exit(1 if errors else 0)
