#!/usr/bin/env python3
"""framework_sites.py: findings name the user's line, not a framework's, and count loops, not bursts.

A stand-in framework, `torchlike`, is installed in a temporary site-packages folder; its
functions reach the runtime test double through ctypes (PyDLL: the GIL stays held, so
every CPython found runs the same readers). The child program:
  - moves 52 buffers to the device once, at start-up, inside torchlike.to_device (a
    pageable async copy and a stream sync each): one burst, not a loop;
  - starts torchlike's own thread, which allocates and frees pinned memory in a loop
    (no frame of the program's on that thread's stack);
  - runs 30 steps of a loop that reads a scalar back through torchlike.item, nine frames
    deep inside torchlike, and does other work at another line.
The report must show:
  1. sync.scalar-readback as a warning at the program's line (LINE-USER), with the
     torchlike frames kept under it, 30 steps;
  2. no finding at the start-up line (LINE-BURST): 52 copies in one burst are one visit;
  3. memory.pinned-in-loop as info, framework "torchlike", and no "warning:" line for it;
  4. one blocking wait as one row of the API list: cuStreamSynchronize under
     cudaStreamSynchronize ("inner", "nested_calls"), its own blocked_ns 0;
  5. the exit summary once with the default settings, none with CUDASHIM_SUMMARY=0 (what
     `cudashim run` sets: its own summary is the one).
  6. the report, its new fields included, matches docs/report-schema.md.
usage: framework_sites.py SHIM FAKECUDA_DIR CUDART_PATH SCHEMA_DOC
"""
import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile

TORCHLIKE = '''
import ctypes
import threading

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
        p = ctypes.c_void_p()
        _rt.cudaHostAlloc(ctypes.byref(p), ctypes.c_size_t(65536), 0)
        _rt.cudaFreeHost(p)


def start_pinner(n):
    t = threading.Thread(target=_pin_loop, args=(n,))
    t.start()
    return t
'''


def child(cudart):
    import torchlike
    torchlike.init(cudart)
    rt = ctypes.PyDLL(cudart)
    dev = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(1 << 20)) == 0
    params = [ctypes.create_string_buffer(4096) for _ in range(52)]
    torchlike.to_device(dev, params)  # LINE-BURST
    pinner = torchlike.start_pinner(40)
    out, small = ctypes.create_string_buffer(4), ctypes.create_string_buffer(4)
    for _ in range(30):
        torchlike.item(out, dev)  # LINE-USER
        rt.cudaMemcpy(dev, small, ctypes.c_size_t(4), 1)
    pinner.join()


def line_of(tag):
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith("# " + tag):
                return i
    raise AssertionError(tag)


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
    user, burst = f"{base}:{line_of('LINE-USER')} ", f"{base}:{line_of('LINE-BURST')} "
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
        if not any("torchlike" in p for p in sites[0]["python"]):
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
        say("no memory.pinned-in-loop for torchlike's own pinning thread")
    else:
        if pin[0]["severity"] != "info" or pin[0].get("framework") != "torchlike":
            say(f"torchlike's own pinned loop is {pin[0]['severity']}, framework {pin[0].get('framework')!r}")
        if "nothing to do in your code" not in pin[0]["fix"]:
            say(f"its fix does not say there is nothing to do: {pin[0]['fix']!r}")
        if not all("inside torchlike" in s["where"] for s in pin[0]["sites"]):
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


def main():
    shim, fake, cudart, schema = sys.argv[1:5]
    checker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hygiene", "check_report_schema.py")
    errors, ran = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        pkg = os.path.join(tmp, "lib", "python3.99", "site-packages", "torchlike")
        os.makedirs(pkg)
        with open(os.path.join(pkg, "__init__.py"), "w") as f:
            f.write(TORCHLIKE)
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
