#!/usr/bin/env python3
"""live_judge.py: a site's live warning comes once, while the job runs, and none is lost at exit.

The hooks only count a call at its site (shim/sync_observer.cpp, observe); the flush thread
judges the sites about once a second and writes their live lines (judge_pending_sites), and the
exit judges once more, before the findings summary and the stream's last line (issue 32). A
child program reaches the runtime test double through ctypes (PyDLL: the GIL stays held, so the
shim reads its Python line), in two shapes:
  - running: a read-back then a stream sync (.item()), 25 ms apart, for about 3.5 s (past the
    warm-up and the second a live warning waits for, by well over a flush tick), then it writes
    LOOP-DONE to stderr and sleeps 1.5 s without a CUDA call. The [sync.scalar-readback] line
    naming LINE-RUN must come before LOOP-DONE: the tick wrote it while the loop still ran.
  - ending: the same loop for 1.3 s, then the program returns at once: the site becomes due at
    about its last hits, so the exit's judgment is what may write it. The line must come once,
    before the exit summary, and the event stream must hold its "finding" event.
In both, the line comes exactly once (once per site) and the report names the same site.
usage: live_judge.py SHIM FAKECUDA_DIR CUDART_PATH
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

FINDING = "sync.scalar-readback"


def child(cudart, shape):
    rt = ctypes.PyDLL(cudart)
    dev = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(1 << 20)) == 0
    out = ctypes.create_string_buffer(4)
    steps = 140 if shape == "running" else 52
    for _ in range(steps):
        time.sleep(0.025)
        rt.cudaMemcpy(out, dev, ctypes.c_size_t(4), 2)
        rt.cudaStreamSynchronize(None)  # LINE-RUN
    if shape == "running":
        sys.stderr.write("LOOP-DONE\n")
        sys.stderr.flush()
        time.sleep(1.5)


def check(shape, p, out, errors):
    say = lambda m: errors.append(f"{shape}: {m}")
    if p.returncode != 0:
        return say(f"child exited {p.returncode}: {p.stderr[-800:]}")
    where = f"{os.path.basename(__file__)}:{line_of(__file__, 'LINE-RUN')}"
    lines = [l for l in p.stderr.splitlines() if f"[{FINDING}]" in l and "findings for pid" not in l]
    live = [l for l in lines if where in l]
    if len(live) != 1:
        return say(f"{len(live)} live [{FINDING}] lines naming {where}, not 1: {p.stderr[-800:]!r}")
    at = p.stderr.find(live[0])
    summary = p.stderr.find("findings for pid")
    if summary < 0 or at > summary:
        say(f"the live line is not before the exit summary: {p.stderr[-800:]!r}")
    if shape == "running" and at > p.stderr.find("LOOP-DONE"):
        say(f"the live line came after the loop ended (no flush tick wrote it): {p.stderr[-800:]!r}")
    reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
    if len(reps) != 1:
        return say(f"{len(reps)} reports")
    sites = [s["where"] for f in reps[0]["findings"] if f["id"] == FINDING for s in f["sites"]]
    if not any(where in s for s in sites):
        say(f"the report has no {FINDING} at {where}: {sites}")
    events = []
    for f in glob.glob(os.path.join(out, "cudashim-*.ndjson")):
        events += [json.loads(l) for l in open(f) if l.strip()]
    found = [e for e in events if e.get("type") == "finding" and e.get("id") == FINDING]
    if len(found) != 1:
        say(f"{len(found)} {FINDING} finding events in the stream, not 1")
    elif events[-1].get("type") != "exit":
        say(f"the stream does not end with its exit line (after the finding): {events[-1]}")


def main():
    shim, fake, cudart = sys.argv[1:4]
    errors = []
    for shape in ("running", "ending"):
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out)
            for k in ("CUDASHIM_LOG_LEVEL", "CUDASHIM_SUMMARY", "CUDASHIM_SYNC_LOOP_SHARE", "CUDASHIM_SYNC_WARMUP_HITS"):
                env.pop(k, None)
            p = subprocess.run([sys.executable, __file__, "--child", cudart, shape], env=env, capture_output=True,
                               text=True, timeout=120)
            check(shape, p, out, errors)
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print("ok: running (the flush tick's line), ending (the exit's)")
    return 1 if errors else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
