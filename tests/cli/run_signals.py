#!/usr/bin/env python3
"""run_signals.py CLI SHIM FAKECUDA_DIR: `cudashim run` and the signals that stop a job (issue 21.1).

The job: a Python process and its child (subprocess), both calling cuInit through ctypes.
  - SIGINT to the wrapper's process group (what Ctrl-C in a terminal does when the
    wrapper is the foreground group): the wrapper passes it to the job's process group,
    both processes leave through KeyboardInterrupt (CPython then kills itself with SIGINT
    under SIG_DFL), each writes its report, the wrapper waits for both, prints the summary
    and exits 130.
  - SIGTERM to the wrapper alone (`kill <pid>`): the job ends too (forwarded), both reports
    are written, exit 143.
Before: the wrapper shared the job's group and died of the SIGINT itself (no summary,
exit -2), and neither Python process left a report (their end skipped every exit path);
SIGTERM to the wrapper alone left the job running.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

cli, shim, fake = sys.argv[1:4]
CHILD = r"""
import ctypes, sys, time
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
print("child ready", flush=True)
while True:
    cuda.cuInit(0)
    time.sleep(0.01)
"""
PARENT = r"""
import ctypes, subprocess, sys, time
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
assert child.stdout.readline().strip() == "child ready"
print("ready", child.pid, flush=True)
while True:
    cuda.cuInit(0)
    time.sleep(0.01)
""".replace("CHILD", repr(CHILD))
errors = []


def case(name, send, want_code):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_LIB=shim, CUDASHIM_LOG_LEVEL="warn", NO_COLOR="1")
        env.pop("LD_PRELOAD", None)
        # A session of its own: the wrapper leads a process group, as under a shell's job control.
        p = subprocess.Popen([cli, "run", "--out", out, "--", sys.executable, "-c", PARENT], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        line = p.stdout.readline().split()
        if not line or line[0] != "ready":
            p.kill()
            errors.append(f"{name}: the job did not start: {line} {p.communicate()[1][-800:]}")
            return
        time.sleep(0.5)  # each process's flush thread has started and looked at its signals
        t0 = time.monotonic()
        send(p)
        try:
            _, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            _, err = p.communicate()
            errors.append(f"{name}: the wrapper did not end within 30 s")
        took = time.monotonic() - t0
        reports = sorted(f for f in glob.glob(os.path.join(out, "cudashim-*.json")) if not f.endswith("-crash.json"))
        pids = []
        for r in reports:
            try:
                pids.append(json.load(open(r))["process"]["pid"])
            except (ValueError, KeyError) as e:
                errors.append(f"{name}: {os.path.basename(r)} is not a complete report: {e!r}")
        for s in glob.glob(os.path.join(out, "*.ndjson")):
            types = [json.loads(l)["type"] for l in open(s)]
            if "exit" not in types or "signal" not in types:
                errors.append(f"{name}: {os.path.basename(s)} lacks its signal or exit line: {types[-3:]}")
        if p.returncode != want_code:
            errors.append(f"{name}: the wrapper exited {p.returncode}, expected {want_code}\n{err[-1500:]}")
        if len(set(pids)) != 2:
            errors.append(f"{name}: reports of pids {pids}, expected the job's two processes")
        if "== cudashim: 2 process report(s)" not in err or f"command exited with {want_code}" not in err:
            errors.append(f"{name}: no summary of two reports ending 'command exited with {want_code}':\n{err[-1500:]}")
        leftovers = [f for f in os.listdir(out) if ".tmp" in f] if os.path.isdir(out) else []
        if leftovers:
            errors.append(f"{name}: stray files {leftovers}")
        print(f"{name}: wrapper exited {p.returncode} {took:.2f} s after the signal; reports of pids {pids}")


case("SIGINT to the wrapper's process group (Ctrl-C)", lambda p: os.killpg(p.pid, signal.SIGINT), 130)
case("SIGTERM to the wrapper alone", lambda p: p.send_signal(signal.SIGTERM), 143)
for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: both signals reach every process of the job; every report written; the summary; the job's exit code")
sys.exit(1 if errors else 0)
