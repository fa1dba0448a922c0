#!/usr/bin/env python3
"""endings.py SHIM FAKECUDA_DIR ENDINGS SCHEMA_DOC: the endings matrix (issue 22).

Every way a process can end, each run twice, without the shim (to see how it ends on
its own) and with it, and judged on four columns:
  - status: the same exit code or signal as without the shim;
  - report: every process that made CUDA calls leaves one complete report (valid against
    docs/report-schema.md, its pid, at least the calls it made); a fault leaves its crash
    record instead (the heap the report needs may be what is broken); no CUDA, no file;
  - stream: each event stream ends with its exit line (a fault's stops at the fault), and
    one that a signal ended says so in a `signal` line;
  - stray: nothing but the outputs in CUDASHIM_OUT (no `.tmp.` file).
The matrix is printed as a table (docs/reliability.md's endings table is this output).
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
PY_SIGNALS = r"""
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
# Ctrl-C in a Python job: KeyboardInterrupt unwinds, Python finalizes, then kills itself
# with SIGINT under SIG_DFL (bpo-1054041), past every C exit path.
PY_CTRL_C = r"""
import ctypes, time
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
print("ready", flush=True)
while True:
    cuda.cuInit(0)
    time.sleep(0.01)
"""
PY_OS_EXIT = "import ctypes, os\nassert ctypes.CDLL('libcuda.so.1').cuInit(0) == 0\nos._exit(3)\n"
PY_MP = r"""
import ctypes, multiprocessing as mp, sys
def child(n):
    cuda = ctypes.CDLL("libcuda.so.1")
    for _ in range(n):
        assert cuda.cuInit(0) == 0
    sys.exit(n)
if __name__ == "__main__":
    ctx = mp.get_context(sys.argv[1])
    ps = [ctx.Process(target=child, args=(n,)) for n in (3, 5)]
    for p in ps: p.start()
    for p in ps: p.join()
    sys.exit(sum(p.exitcode for p in ps))
"""
errors = []
rows = []
MP_DIR = tempfile.TemporaryDirectory()
MP_FILE = os.path.join(MP_DIR.name, "mp_children.py")
with open(MP_FILE, "w") as f:
    f.write(PY_MP)


def run(argv, with_shim, out, send=None, extra_env=None):
    """Runs argv; returns (returncode, stdout, stderr, seconds from the signal to the end, pid)."""
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="warn", **(extra_env or {}))
    env.pop("LD_PRELOAD", None)
    if with_shim:
        env["LD_PRELOAD"] = shim
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    took = None
    if send:
        line = p.stdout.readline()
        if line.strip() != "ready":
            p.kill()
            return p.wait(), line, p.stderr.read(), None, p.pid
        time.sleep(0.3)
        t0 = time.monotonic()
        p.send_signal(send)
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


def status_text(rc):
    if rc is None:
        return "?"
    if rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"exit {rc}"


# name, argv, signal sent after "ready", extra env,
# what it leaves: ("report", processes, {abi: minimum calls}) | ("crash", signal name) | ("none",)
S = signal
CASES = [
    ("normal exit", [prog, "normal"], None, {}, ("report", 1, {"cuLaunchKernel": 100})),
    ("exit() from a non-main thread, 7 others calling", [prog, "exit_thread", "8"], None, {},
     ("report", 1, {"cuLaunchKernel": 20001})),
    ("main's pthread_exit, last thread", [prog, "pthread_exit"], None, {}, ("report", 1, {"cuLaunchKernel": 100})),
    ("main's pthread_exit, SIGTERM to the worker", [prog, "pthread_exit_worker"], S.SIGTERM, {},
     ("report", 1, {"cuLaunchKernel": 100})),
    ("_exit(5)", [prog, "_exit"], None, {}, ("report", 1, {"cuLaunchKernel": 100})),
    ("_Exit(6)", [prog, "_Exit"], None, {}, ("report", 1, {"cuLaunchKernel": 100})),
    ("quick_exit(8)", [prog, "quick_exit"], None, {}, ("report", 1, {"cuLaunchKernel": 100})),
    ("abort()", [prog, "abort"], None, {}, ("report+crash", 1, {"cuLaunchKernel": 100})),
    ("uncaught C++ exception on a worker", [prog, "throw", "8"], None, {},
     ("report+crash", 1, {"cuLaunchKernel": 20001})),
    ("SIGSEGV (null write)", [prog, "segv"], None, {}, ("crash", "SIGSEGV")),
    ("SIGBUS (past a file mapping)", [prog, "bus"], None, {}, ("crash", "SIGBUS")),
    ("SIGFPE (division by zero)", [prog, "fpe"], None, {}, ("crash", "SIGFPE")),
    ("SIGILL (ud2)", [prog, "ill"], None, {}, ("crash", "SIGILL")),
    ("SIGTERM, 8 threads inside cuStreamSynchronize", [prog, "sigterm", "8"], S.SIGTERM,
     {"FAKECUDA_SYNC_DELAY_US": "200"}, ("report", 1, {"cuLaunchKernel": 800, "cuStreamSynchronize": 800})),
    ("SIGTERM, the program's own handler (exits 4)", [prog, "own"], None, {}, ("report", 1, {"cuLaunchKernel": 100})),
    ("SIGTERM, a handler set after CUDA that chains", [prog, "chain"], S.SIGTERM, {},
     ("report", 1, {"cuLaunchKernel": 101})),
    ("SIGTERM ignored by the program", [prog, "ignored"], None, {}, ("report", 1, {"cuLaunchKernel": 101})),
    ("SIGTERM, no CUDA call", [prog, "nocuda"], S.SIGTERM, {}, ("none",)),
    ("SIGINT, default action, 8 threads in hooks", [prog, "sigterm", "8"], S.SIGINT, {"FAKECUDA_SYNC_DELAY_US": "200"},
     ("report", 1, {"cuLaunchKernel": 800})),
    ("SIGHUP, default action, 8 threads in hooks", [prog, "sigterm", "8"], S.SIGHUP, {"FAKECUDA_SYNC_DELAY_US": "200"},
     ("report", 1, {"cuLaunchKernel": 800})),
    ("Python: getsignal, KeyboardInterrupt caught, SIGTERM", [sys.executable, "-c", PY_SIGNALS], S.SIGTERM, {},
     ("report", 1, {"cuInit": 2})),
    ("Python: Ctrl-C (KeyboardInterrupt uncaught)", [sys.executable, "-c", PY_CTRL_C], S.SIGINT, {},
     ("report", 1, {"cuInit": 2})),
    ("Python: os._exit(3)", [sys.executable, "-c", PY_OS_EXIT], None, {}, ("report", 1, {"cuInit": 1})),
    ("exec after CUDA calls (one failed exec first)", [prog, "exec"], None, {},
     ("report", 1, {"cuLaunchKernel": 200})),
    ("multiprocessing fork children", [sys.executable, MP_FILE, "fork"], None, {}, ("report", 2, {"cuInit": 3})),
    ("multiprocessing spawn children", [sys.executable, MP_FILE, "spawn"], None, {}, ("report", 2, {"cuInit": 3})),
    ("multiprocessing forkserver children", [sys.executable, MP_FILE, "forkserver"], None, {},
     ("report", 2, {"cuInit": 3})),
]


def judge(name, out, pid, leaves, sent, rc, argv):
    """Returns (report, stream, stray) cells; appends to errors."""
    files = sorted(os.listdir(out))
    reports = [f for f in files if f.startswith("cudashim-") and f.endswith(".json") and not f.endswith("-crash.json")]
    crashes = [f for f in files if f.endswith("-crash.json")]
    streams = [f for f in files if f.endswith(".ndjson")]
    stray = [f for f in files if ".tmp" in f]
    kind = leaves[0]
    report_cell, stream_cell = "", ""
    if kind == "none":
        if files:
            errors.append(f"{name}: no CUDA call, yet {files}")
        return ("none (no CUDA call)" if not files else f"{files}"), "none", ("none" if not stray else f"{stray}")
    if kind == "crash-caught":
        if crashes:
            errors.append(f"{name}: no signal ended the process, yet crash records {crashes}")
        return "none (no signal: the program's sanitizer caught the fault)", "-", ("none" if not stray else f"{stray}")
    if kind == "crash":
        want = leaves[1]
        got = [json.load(open(os.path.join(out, c))).get("signal_name") for c in crashes]
        if got != [want]:
            errors.append(f"{name}: crash records {got}, expected one {want}")
        report_cell = f"crash record ({', '.join(got) or 'none'})"
    else:
        count, min_calls = leaves[1], leaves[2]
        if len(reports) != count:
            errors.append(f"{name}: {len(reports)} reports, expected {count}: {files}")
        pids, calls = [], []
        for r in reports:
            path = os.path.join(out, r)
            v = subprocess.run([sys.executable, CHECK_SCHEMA, schema, path], capture_output=True, text=True)
            if v.returncode != 0:
                errors.append(f"{name}: {r} does not match the schema:\n{v.stdout[-1000:]}")
            rep = json.load(open(path))
            pids.append(rep["process"]["pid"])
            # Read at start-up (issue 37: after main's pthread_exit /proc/self/cmdline is empty).
            if count == 1 and rep["process"].get("argv") != argv:
                errors.append(f"{name}: process.argv {rep['process'].get('argv')!r}, the program ran as {argv!r}")
            got = {abi: rep.get("api", {}).get(abi, {}).get("calls", 0) for abi in min_calls}
            calls.append(got)
            for abi, n in min_calls.items():
                if got[abi] < n:
                    errors.append(f"{name}: {r}: api.{abi}.calls = {got[abi]}, the program made at least {n}")
        if count == 1 and pids and pids != [pid]:
            errors.append(f"{name}: report of pid {pids}, the process was {pid}")
        if len(set(pids)) != len(pids):
            errors.append(f"{name}: two reports of one pid: {pids}")
        if kind == "report+crash" and len(crashes) != 1:
            errors.append(f"{name}: expected a crash record too, got {crashes}")
        report_cell = f"{len(reports)} complete" + (" + crash record" if crashes else "")
    ends = []
    for st in streams:
        lines = [json.loads(l) for l in open(os.path.join(out, st))]
        types = [l["type"] for l in lines]
        sigs = [l["name"] for l in lines if l["type"] == "signal"]
        if kind == "crash":
            ends.append("stops at the fault")
            continue
        if "exit" not in types:
            errors.append(f"{name}: {st} has no exit line: {types[-3:]}")
            ends.append(f"no exit line (ends {types[-1] if types else 'empty'})")
            continue
        if rc is not None and rc < 0 and sent and -rc == sent and signal.Signals(sent).name not in sigs:
            errors.append(f"{name}: killed by {signal.Signals(sent).name} and no such signal line in {st}")
        ends.append("exit line" + (f" after {', '.join(sigs)}" if sigs else ""))
    if kind != "crash" and len(streams) != leaves[1]:
        errors.append(f"{name}: {len(streams)} streams for {leaves[1]} processes")
    stream_cell = "; ".join(sorted(set(ends))) or "none"
    if stray:
        errors.append(f"{name}: stray files {stray}")
    return report_cell, stream_cell, ("none" if not stray else ", ".join(stray))


for name, argv, send, env, leaves in CASES:
    with tempfile.TemporaryDirectory() as plain_out, tempfile.TemporaryDirectory() as out:
        rc0, _, _, _, _ = run(argv, False, plain_out, send, env)
        rc, so, se, took, pid = run(argv, True, out, send, env)
        if rc != rc0:
            errors.append(f"{name}: ended {status_text(rc)} with the shim, {status_text(rc0)} without\n{se[-1500:]}")
        if took is not None and took > 2.5:
            errors.append(f"{name}: {took:.2f} s from the signal to the end (deadline 2 s)")
        if "own" in argv and "own SIGTERM handler ran" not in se:
            errors.append(f"{name}: the program's handler did not run: {se[-500:]}")
        if "ignored" in argv and "still running" not in so:
            errors.append(f"{name}: the ignored SIGTERM was not ignored: {so} {se[-500:]}")
        if leaves[0] == "crash" and (rc0 is None or rc0 >= 0):
            # No signal ended it even without the shim: a sanitizer build of the program caught
            # the fault first (UBSan's null store and division by zero exit 1): no crash to record.
            leaves = ("crash-caught",)
        cells = judge(name, out, pid, leaves, send, rc, argv)
        after = f", {took:.2f} s after {signal.Signals(send).name}" if took is not None else ""
        rows.append((name, status_text(rc0), status_text(rc) + after, *cells))

head = ("case", "without the shim", "with the shim", "report", "stream", "stray files")
print("| " + " | ".join(head) + " |")
print("| " + " | ".join("---" for _ in head) + " |")
for r in rows:
    print("| " + " | ".join(r) + " |")
for e in errors:
    print("FAIL: " + e)
if not errors:
    print(f"ok: {len(CASES)} endings, each as without the shim, each with its complete outputs and no stray file")
sys.exit(1 if errors else 0)
