#!/usr/bin/env python3
"""framework_sites.py: findings name the user's line, not a framework's, and count loops, not bursts.

Two stand-in packages are installed in a temporary site-packages folder: an array library,
`torch`, whose functions reach the runtime test double through ctypes (PyDLL: the GIL stays
held, so every CPython found runs the same readers), and a host framework, `transformers`,
whose Trainer runs the user's step in its own loop and reads a scalar back itself each step
(catalog/python_packages.def). The child program:
  - moves 52 buffers to the device once, at start-up, inside torch.to_device (a
    pageable async copy and a stream sync each): one burst, not a loop;
  - starts torch's own thread, which allocates and frees pinned memory in a loop
    (no frame of the program's on that thread's stack);
  - runs 30 steps of a loop that reads a scalar back through torch.item, nine frames
    deep inside torch, and does other work at another line;
  - calls transformers.Trainer.train (LINE-TRAIN), whose loop of 30 steps calls the user's
    step (a read-back of the user's own at LINE-OWN) and then reads one back itself.
The report must show:
  1. sync.scalar-readback as a warning at the program's line (LINE-USER), with the
     torch frames kept under it, 30 steps;
  2. no finding at the start-up line (LINE-BURST): 52 copies in one burst are one visit;
  3. memory.pinned-in-loop as info, framework "torch", and no "warning:" line for it;
  4. one blocking wait as one row of the API list: cuStreamSynchronize under
     cudaStreamSynchronize ("inner", "nested_calls"), its own blocked_ns 0;
  5. the exit summary once with the default settings, none with CUDASHIM_SUMMARY=0 (what
     `cudashim run` sets: its own summary is the one).
  6. the report, its new fields included, matches docs/report-schema.md;
  7. the Trainer's own read-back: info, framework "transformers", its row's fix, its site
     "reached from your line" LINE-TRAIN, no "warning:" line; the user's own read-back inside
     the Trainer's loop (LINE-OWN) a warning at that line.
usage: framework_sites.py SHIM FAKECUDA_DIR CUDART_PATH SCHEMA_DOC
"""
import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

from preload_support import line_of

TORCHLIKE = '''
import ctypes
import threading
import time

_rt = None


def init(path):
    global _rt
    _rt = ctypes.PyDLL(path)


def _deep(n, fn):
    return fn() if n == 0 else _deep(n - 1, fn)


def _read(out, dev):
    _rt.cudaMemcpy(out, dev, ctypes.c_size_t(4), 2)
    _rt.cudaStreamSynchronize(None)


def item(out, dev):
    return _deep(8, lambda: _read(out, dev))


def to_device(dev, host_buffers):
    for h in host_buffers:
        _rt.cudaMemcpyAsync(dev, h, ctypes.c_size_t(len(h)), 1, None)
        _rt.cudaStreamSynchronize(None)


def _pin_loop(n):
    for _ in range(n):
        time.sleep(0.001)
        p = ctypes.c_void_p()
        _rt.cudaHostAlloc(ctypes.byref(p), ctypes.c_size_t(65536), 0)
        _rt.cudaFreeHost(p)


def start_pinner(n):
    t = threading.Thread(target=_pin_loop, args=(n,))
    t.start()
    return t
'''

TRANSFORMERS = '''
import torch


class Trainer:
    def __init__(self, step, out, dev):
        self.step, self.out, self.dev = step, out, dev

    def _log_loss(self):
        return torch.item(self.out, self.dev)

    def train(self, n):
        for _ in range(n):
            self.step()
            self._log_loss()
'''


def child(cudart):
    import torch
    torch.init(cudart)
    rt = ctypes.PyDLL(cudart)
    dev = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(1 << 20)) == 0
    params = [ctypes.create_string_buffer(4096) for _ in range(52)]
    torch.to_device(dev, params)  # LINE-BURST
    pinner = torch.start_pinner(40)
    out, small = ctypes.create_string_buffer(4), ctypes.create_string_buffer(4)
    for _ in range(30):
        time.sleep(0.002)  # a step's own work: a loop takes time (sync.loop_share)
        torch.item(out, dev)  # LINE-USER
        rt.cudaMemcpy(dev, small, ctypes.c_size_t(4), 1)
    import transformers

    def step():
        time.sleep(0.002)
        rt.cudaMemcpy(dev, small, ctypes.c_size_t(4), 1)
        torch.item(out, dev)  # LINE-OWN

    transformers.Trainer(step, out, dev).train(30)  # LINE-TRAIN
    pinner.join()


def interpreters():
    """Every CPython torch supports that scripts/pythons.sh finds (3.10 to 3.14), else this one."""
    pythons = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "pythons.sh")
    found = []
    for ver in ("3.10", "3.11", "3.12", "3.13", "3.14"):
        r = subprocess.run(["bash", pythons, "find", ver], capture_output=True, text=True)
        cand = r.stdout.strip()
        if r.returncode == 0 and cand and os.path.realpath(cand) not in [os.path.realpath(f) for f in found]:
            found.append(cand)
    return found or [sys.executable]


def check(ver, rep, stderr, errors):
    base = os.path.basename(__file__)
    user, burst = f"{base}:{line_of(__file__, 'LINE-USER')} ", f"{base}:{line_of(__file__, 'LINE-BURST')} "
    by_id = {}
    for f in rep["findings"]:
        by_id.setdefault(f["id"], []).append(f)
    say = lambda m: errors.append(f"python {ver}: {m}")
    # 1. the user's line
    rb = [f for f in by_id.get("sync.scalar-readback", []) if f.get("framework") is None]
    sites = [s for f in rb for s in f["sites"] if os.path.basename(s["where"]).startswith(user)]
    if not sites:
        say(f"no sync.scalar-readback at {user.strip()}: {[(f['id'], [s['where'] for s in f['sites']]) for f in rep['findings']]}")
    else:
        if rb[0]["severity"] != "warning":
            say(f"sync.scalar-readback at the user's line is {rb[0]['severity']}, not a warning")
        if not any("torch" in p for p in sites[0]["python"]):
            say(f"the frames under the user's line are gone: {sites[0]['python']}")
        if rb[0].get("steps") != 30 or sites[0].get("steps") != 30:
            say(f"steps {rb[0].get('steps')} (site {sites[0].get('steps')}), not the loop's 30")
        if rb[0].get("blocked_per_step_ns") != rb[0]["blocked_ns"] // 30:
            say(f"blocked_per_step_ns {rb[0].get('blocked_per_step_ns')} is not blocked_ns / steps")
    # 2. the burst is no loop
    at_burst = [(f["id"], s["where"]) for f in rep["findings"] for s in f["sites"] if os.path.basename(s["where"]).startswith(burst)]
    if at_burst:
        say(f"the start-up burst of 52 copies is reported as a loop: {at_burst}")
    # 3. the framework's own thread: info, named, not printed as a warning
    pin = by_id.get("memory.pinned-in-loop", [])
    if not pin:
        say("no memory.pinned-in-loop for torch's own pinning thread")
    else:
        if pin[0]["severity"] != "info" or pin[0].get("framework") != "torch":
            say(f"torch's own pinned loop is {pin[0]['severity']}, framework {pin[0].get('framework')!r}")
        if "nothing to do in your code" not in pin[0]["fix"]:
            say(f"its fix does not say there is nothing to do: {pin[0]['fix']!r}")
        if not all("inside torch" in s["where"] for s in pin[0]["sites"]):
            say(f"its sites do not name the framework: {[s['where'] for s in pin[0]['sites']]}")
    if "warning: [memory.pinned-in-loop]" in stderr:
        say("the framework's own finding printed as a warning line")
    # 4. one wait, one row
    api = rep["api"]
    outer, inner = api.get("cudaStreamSynchronize", {}), api.get("cuStreamSynchronize", {})
    if "cuStreamSynchronize" not in outer.get("inner", {}) or inner.get("nested_calls", 0) == 0:
        say(f"cuStreamSynchronize is not listed under cudaStreamSynchronize: {outer} / {inner}")
    elif inner.get("blocked_ns", 0) != 0:
        say(f"cuStreamSynchronize still counts the runtime's waits as its own: {inner}")
    # 7. the host framework's own sync, reached from the user's line, and the user's own inside its loop
    own, train = f"{base}:{line_of(__file__, 'LINE-OWN')} ", f"{base}:{line_of(__file__, 'LINE-TRAIN')} "
    hosted = [f for f in rep["findings"] if f.get("framework") == "transformers"]
    if not hosted:
        say(f"no finding of the host framework transformers: {[(f['id'], f.get('framework')) for f in rep['findings']]}")
    for f in hosted:
        if f["severity"] != "info" or "logging_nan_inf_filter" not in f["fix"]:
            say(f"the Trainer's own {f['id']} is {f['severity']}, fix {f['fix']!r}")
        if not all("inside transformers, reached from your line " in s["where"] and s["where"].find(train.strip()) > 0
                   for s in f["sites"]):
            say(f"the Trainer's own sites do not say the line they are reached from: {[s['where'] for s in f['sites']]}")
    if any("warning:" in line and "reached from your line" in line for line in stderr.splitlines()):
        say("the Trainer's own read-back printed as a warning line")
    mine = [f for f in rb if any(os.path.basename(s["where"]).startswith(own) for s in f["sites"])]
    if not mine or mine[0]["severity"] != "warning":
        say(f"the user's own read-back inside the Trainer's loop ({own.strip()}) is no warning: "
            f"{[(f['id'], f['severity'], [s['where'] for s in f['sites']]) for f in rep['findings']]}")


def main():
    shim, fake, cudart, schema = sys.argv[1:5]
    checker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hygiene", "check_report_schema.py")
    errors, ran = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        pkg = os.path.join(tmp, "lib", "python3.99", "site-packages", "torch")
        os.makedirs(pkg)
        with open(os.path.join(pkg, "__init__.py"), "w") as f:
            f.write(TORCHLIKE)
        os.makedirs(os.path.join(os.path.dirname(pkg), "transformers"))
        with open(os.path.join(os.path.dirname(pkg), "transformers", "__init__.py"), "w") as f:
            f.write(TRANSFORMERS)
        for py in interpreters():
            ver = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True,
                                 text=True).stdout.strip()
            for summary in ("", "0"):
                with tempfile.TemporaryDirectory() as out:
                    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out,
                               PYTHONPATH=os.path.dirname(pkg))
                    env.pop("CUDASHIM_LOG_LEVEL", None)
                    env.pop("CUDASHIM_SUMMARY", None)
                    if summary:
                        env["CUDASHIM_SUMMARY"] = summary
                    p = subprocess.run([py, __file__, "--child", cudart], env=env, capture_output=True, text=True,
                                       timeout=120)
                    if p.returncode != 0:
                        errors.append(f"python {ver}: child exited {p.returncode}: {p.stderr[-800:]}")
                        continue
                    reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
                    if len(reps) != 1:
                        errors.append(f"python {ver}: {len(reps)} reports")
                        continue
                    summaries = p.stderr.count("findings for pid")
                    if summaries != (0 if summary == "0" else 1):
                        errors.append(f"python {ver}, CUDASHIM_SUMMARY={summary or 'unset'}: {summaries} exit summaries")
                    if not summary:
                        check(ver, reps[0], p.stderr, errors)
                        v = subprocess.run([sys.executable, checker, schema] + glob.glob(os.path.join(out, "cudashim-*.json")),
                                           capture_output=True, text=True)
                        if v.returncode != 0:
                            errors.append(f"python {ver}: the report does not match the schema: {v.stdout[-1500:]}")
                        ran += 1
                        print(f"python {ver}: " + "; ".join(
                            f"{f['id']} {f['severity']} {f.get('framework')} steps {f.get('steps')} at "
                            f"{f['sites'][0]['where'] if f['sites'] else '-'}" for f in reps[0]["findings"]))
    if ran == 0:
        errors.append("no CPython interpreter could run the test")
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print(f"ok: {ran} interpreters")
    return 1 if errors else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
    else:
        sys.exit(main())
