#!/usr/bin/env python3
"""python_site_overhead.py: what a hooked sync costs from Python, per CPython version, with the
GIL held and released, for two builds of the preload library side by side in one run.

    bench/python_site_overhead.py --base BASE_LIB --new NEW_LIB --fakecuda DIR [--rounds N]
        [--calls N] [--out FILE] [X.Y ...]

Each process (one per version, GIL mode and side: no shim, base, new; alternating order, N rounds)
times --batches batches of --calls `cudaStreamSynchronize` calls on the test-double runtime through
ctypes, with the GIL held (ctypes.PyDLL) or released (ctypes.CDLL), after a warm-up of one batch, and
prints the ns per call of its fastest batch. Every call is a call site hit: the shim reads the calling thread's Python location (its code
object and instruction, shim/python_stack.cpp) on each. The table gives, per version and mode, the
median over rounds of: no shim, base, new, new/base and the added cost (side - no shim). The
interpreters come from scripts/pythons.sh find. Informs only: exit 0 unless a run fails.
"""
import argparse
import datetime
import os
import platform
import shlex
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r"""
import ctypes, sys, time
lib = (ctypes.PyDLL if sys.argv[2] == "held" else ctypes.CDLL)(sys.argv[1])
calls = int(sys.argv[3])
sync = lib.cudaStreamSynchronize
def loop(n):
    for _ in range(n):
        sync(None)
loop(calls)
best = None
for _ in range(int(sys.argv[4])):
    t0 = time.perf_counter_ns()
    loop(calls)
    t = (time.perf_counter_ns() - t0) / calls
    best = t if best is None or t < best else best
print(best)
"""


def run(py, lib, fake, cudart, mode, calls, batches):
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_LOG_LEVEL="error", CUDASHIM_OUT="/tmp")
    env.pop("LD_PRELOAD", None)
    if lib:
        env["LD_PRELOAD"] = lib
        env["CUDASHIM_REPORT"] = "0"
    p = subprocess.run([py, "-c", CHILD, cudart, mode, str(calls), str(batches)], env=env, capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        sys.exit(f"python_site_overhead: {py} ({mode}, {lib or 'no shim'}) exited {p.returncode}: {p.stderr[-600:]}")
    return float(p.stdout.split()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="the base build's libcudashim.so")
    ap.add_argument("--new", required=True, help="the new build's libcudashim.so")
    ap.add_argument("--fakecuda", required=True, help="the folder of the test-double driver and runtime")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--base-label", default="base")
    ap.add_argument("--new-label", default="new")
    ap.add_argument("--out")
    ap.add_argument("versions", nargs="*", default=["3.10", "3.11", "3.12", "3.13", "3.14"])
    a = ap.parse_args()
    cudart = os.path.join(a.fakecuda, "libcudart.so.12")
    if not os.path.exists(cudart):
        cands = sorted(f for f in os.listdir(a.fakecuda) if f.startswith("libcudart.so."))
        if not cands:
            sys.exit(f"python_site_overhead: no libcudart.so.* in {a.fakecuda}: give the test double's folder")
        cudart = os.path.join(a.fakecuda, cands[0])
    rows = []
    for v in a.versions:
        f = subprocess.run([os.path.join(ROOT, "scripts", "pythons.sh"), "find", v], capture_output=True, text=True)
        if f.returncode != 0:
            print(f"python_site_overhead: skipping {v}: {f.stderr.strip()}", file=sys.stderr)
            continue
        py = f.stdout.strip()
        for mode in ("held", "released"):
            got = {"none": [], "base": [], "new": []}
            for r in range(a.rounds):
                order = [("none", None), ("base", a.base), ("new", a.new)]
                if r % 2:
                    order = order[::-1]
                for side, lib in order:
                    got[side].append(run(py, lib, a.fakecuda, cudart, mode, a.calls, a.batches))
            med = {k: statistics.median(x) for k, x in got.items()}
            rows.append((v, mode, med, {k: (min(x), max(x)) for k, x in got.items()}))
            print(f"python_site_overhead: {v} {mode}: " + ", ".join(f"{k} {m:.0f} ns" for k, m in med.items()),
                  file=sys.stderr)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    cmd = "bench/python_site_overhead.py " + " ".join(shlex.quote(x) for x in sys.argv[1:])
    out = [f"# A hooked sync from Python, per CPython version: {a.base_label} vs {a.new_label}\n",
           f"- date: {now}",
           f"- command: `{cmd}`",
           f"- base: {a.base_label} ({a.base}); new: {a.new_label} ({a.new})",
           f"- machine: {platform.machine()}, {os.cpu_count()} CPUs (nproc), kernel {platform.release()}; nothing pinned",
           f"- per process: {a.calls} warm-up calls, then {a.batches} timed batches of {a.calls} "
           f"`cudaStreamSynchronize(NULL)` calls through ctypes on the test double (every one a call-site hit); the "
           f"process's figure is its fastest batch (ns per call: on a shared machine the slower ones measure the "
           f"other jobs); {a.rounds} processes per side, the order (no shim, base, new) reversed every other round; "
           f"medians over processes (min-max after)",
           "- held: ctypes.PyDLL (the GIL stays held); released: ctypes.CDLL (released during the call)\n",
           "| CPython | GIL | no shim ns | base ns | new ns | new/base | base added ns | new added ns | "
           "base min-max | new min-max |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for v, mode, med, spread in rows:
        n, b, w = med["none"], med["base"], med["new"]
        out.append(f"| {v} | {mode} | {n:.0f} | {b:.0f} | {w:.0f} | {w / b:.3f} | {b - n:.0f} | {w - n:.0f} | "
                   f"{spread['base'][0]:.0f}-{spread['base'][1]:.0f} | {spread['new'][0]:.0f}-{spread['new'][1]:.0f} |")
    text = "\n".join(out) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
