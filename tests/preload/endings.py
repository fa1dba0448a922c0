#!/usr/bin/env python3
"""endings.py SHIM FAKECUDA_DIR ENDINGS SCHEMA_DOC: nothing is lost however a process ends.

Each case runs tests/progs/endings (and one Python program) twice: without the shim, to
see how it ends on its own, and with it. It must end the same way (exit code or signal),
and with the shim leave one complete report valid against docs/report-schema.md whenever
it made CUDA calls: SIGTERM while 8 threads are inside hooks, exit() from a non-main
thread while the others keep calling, an uncaught C++ exception (the crash record and the
full report), a program that ignores SIGTERM or handles it itself (its choice stands),
and a process with no CUDA call (no report, no delay).
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

shim, fake, prog, schema = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
CHECK_SCHEMA = os.path.join(HERE, "..", "hygiene", "check_report_schema.py")
PY_JOB = r"""
import ctypes, os, signal, sys, time
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
time.sleep(0.5)  # the shim's flush thread has started and looked at SIGTERM
if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
    sys.exit(f"signal.getsignal(SIGTERM) is {signal.getsignal(signal.SIGTERM)!r}, not SIG_DFL")
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)
    sys.exit("SIGINT did not raise KeyboardInterrupt")
except KeyboardInterrupt:
    pass
print("ready", flush=True)
while True:
    cuda.cuInit(0)
    time.sleep(0.01)
"""
errors = []


def run(argv, with_shim, out, send_term=False, extra_env=None):
    """Runs argv; returns (returncode, stdout, stderr, seconds from SIGTERM to the end, pid)."""
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="warn", **(extra_env or {}))
    env.pop("LD_PRELOAD", None)
    if with_shim:
        env["LD_PRELOAD"] = shim
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    took = None
    if send_term:
        line = p.stdout.readline()
        if line.strip() != "ready":
            p.kill()
            return p.wait(), line, p.stderr.read(), None, p.pid
        time.sleep(0.3)
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
        took = time.monotonic() - t0
    try:
        stdout, stderr = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
    return p.returncode, stdout, stderr, took, p.pid


def outputs(out):
    reports = [f for f in glob.glob(os.path.join(out, "cudashim-*.json")) if not f.endswith("-crash.json")]
    return reports, glob.glob(os.path.join(out, "cudashim-*-crash.json")), glob.glob(os.path.join(out, "*.ndjson"))


def check_report(case, out, pid, min_calls):
    reports, _, streams = outputs(out)
    if len(reports) != 1:
        errors.append(f"{case}: {len(reports)} reports in {sorted(os.listdir(out))}")
        return None
    v = subprocess.run([sys.executable, CHECK_SCHEMA, schema, reports[0]], capture_output=True, text=True)
    if v.returncode != 0:
        errors.append(f"{case}: the report does not match the schema:\n{v.stdout}")
    rep = json.load(open(reports[0]))
    if rep["process"]["pid"] != pid:
        errors.append(f"{case}: report of pid {rep['process']['pid']}, the process was {pid}")
    for abi, n in min_calls.items():
        got = rep.get("api", {}).get(abi, {}).get("calls", 0)
        if got < n:
            errors.append(f"{case}: api.{abi}.calls = {got}, the program made at least {n}")
    lines = [json.loads(l) for l in open(streams[0])] if len(streams) == 1 else []
    if "exit" not in [l["type"] for l in lines]:
        errors.append(f"{case}: the event stream has no exit line: {[l['type'] for l in lines][-3:]}")
    return rep, lines


CASES = [
    # name, argv, SIGTERM sent by us, extra env, minimum calls in the report (None: no report)
    ("sigterm, 8 threads in hooks", [prog, "sigterm", "8"], True, {"FAKECUDA_SYNC_DELAY_US": "200"},
     {"cuLaunchKernel": 800, "cuStreamSynchronize": 800, "cuMemAlloc_v2": 800}),
    ("exit() from a non-main thread", [prog, "exit_thread", "8"], False, {}, {"cuLaunchKernel": 20001}),
    ("uncaught C++ exception", [prog, "throw", "8"], False, {}, {"cuLaunchKernel": 20001}),
    ("sigterm, no CUDA call", [prog, "nocuda"], True, {}, None),
    ("SIGTERM ignored by the program", [prog, "ignored"], False, {}, {"cuLaunchKernel": 101}),
    ("the program's own SIGTERM handler", [prog, "own"], False, {}, {"cuLaunchKernel": 100}),
    ("python, sigterm", [sys.executable, "-c", PY_JOB], True, {}, {"cuInit": 2}),
    # The shim's flush thread outlived the last program thread and blocked every signal: the
    # process never ended, and SIGTERM stayed pending (issue 22, item 1).
    # exec replaced the image without a destructor: the old image's report was lost (item 7).
    ("exec after CUDA calls (one failed exec first)", [prog, "exec"], False, {}, {"cuLaunchKernel": 200}),
    ("pthread_exit of main, last thread", [prog, "pthread_exit"], False, {}, {"cuLaunchKernel": 100}),
    ("pthread_exit of main, sigterm to the worker", [prog, "pthread_exit_worker"], True, {}, {"cuLaunchKernel": 100}),
]
for name, argv, term, env, min_calls in CASES:
    with tempfile.TemporaryDirectory() as plain_out, tempfile.TemporaryDirectory() as out:
        rc0, _, _, _, _ = run(argv, False, plain_out, term, env)
        rc, so, se, took, pid = run(argv, True, out, term, env)
        how = f"ended {rc}" + (f" {took:.2f} s after SIGTERM" if took is not None else "")
        if rc != rc0:
            errors.append(f"{name}: ended {rc} with the shim, {rc0} without\n{se[-2000:]}")
        reports, crashes, _ = outputs(out)
        if min_calls is None:
            if reports or crashes:
                errors.append(f"{name}: no CUDA call, yet {reports + crashes}")
            if took is not None and took > 0.5:
                errors.append(f"{name}: took {took:.2f} s to end after SIGTERM with no CUDA call")
            print(f"{name}: {how} (without the shim: {rc0}); no report")
            continue
        got = check_report(name, out, pid, min_calls)
        if took is not None and took > 2.5:
            errors.append(f"{name}: {took:.2f} s from SIGTERM to the end (deadline 2 s)")
        if got:
            rep, lines = got
            signals = [l for l in lines if l["type"] == "signal"]
            if term and not [s for s in signals if s["name"] == "SIGTERM"]:
                errors.append(f"{name}: no SIGTERM line in the event stream")
            if "exception" in name:
                if len(crashes) != 1 or json.load(open(crashes[0])).get("signal_name") != "SIGABRT":
                    errors.append(f"{name}: expected one SIGABRT crash record, got {crashes}")
                if not [s for s in signals if s["name"] == "SIGABRT"]:
                    errors.append(f"{name}: no SIGABRT line in the event stream")
            calls = {k: rep["api"].get(k, {}).get("calls", 0) for k in min_calls}
            print(f"{name}: {how} (without the shim: {rc0}); report with {calls}"
                  f"{'; crash record too' if crashes else ''}")
        if "own" in name and "own SIGTERM handler ran" not in se:
            errors.append(f"{name}: the program's handler did not run: {se[-500:]}")
        if "ignored" in name and "still running" not in so:
            errors.append(f"{name}: the ignored SIGTERM was not ignored: {so} {se[-500:]}")
for e in errors:
    print("FAIL: " + e)
if not errors:
    print(f"ok: {len(CASES)} endings, each as without the shim, each with its complete report")
sys.exit(1 if errors else 0)
