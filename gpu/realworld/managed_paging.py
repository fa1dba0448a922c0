#!/usr/bin/env python3
"""managed_paging.py CLI RUNS_DIR [--seconds S]: managed memory over the bus on the GPU host,
under cudashim (docs/managed-memory.md). Writes a markdown table to stdout and
RUNS_DIR/managed_paging.json.

Two runs of this same file as a child (`--child MODE`), each under `CLI run`:
  paging    one managed buffer (CuPy's malloc_managed; at most 1 GiB and never more than an
            eighth of the free device memory, read first with cudaMemGetInfo) touched in turn
            by the CPU (one float in each 4 KiB page) and the GPU (the whole buffer) every step:
            its pages cross PCIe both ways each step;
  prefetch  the control: the same buffer prefetched to the GPU once (cudaMemPrefetchAsync; if
            CuPy's binding refuses, a first touch by the GPU does the same), then touched by the
            GPU only: nothing crosses the bus in the loop.
Expected: memory.managed-paging in the first, at the malloc_managed line below, none in the
second; estimated bytes each way near the buffer's size per step in the first.
"""
import argparse
import ctypes
import glob
import json
import os
import subprocess
import sys
import time


def child(mode, seconds, mib):
    import cupy as cp
    import numpy as np
    free, total = cp.cuda.runtime.memGetInfo()
    nbytes = min(mib << 20, 1 << 30, free // 8) & ~((1 << 20) - 1)
    if nbytes < (16 << 20):
        print(json.dumps({"mode": mode, "error": f"only {free >> 20} MiB free"}))
        return 1
    mem = cp.cuda.malloc_managed(nbytes)  # MANAGED-SITE
    n = nbytes // 4
    g = cp.ndarray((n,), cp.float32, mem)  # malloc_managed returns a MemoryPointer
    h = np.ctypeslib.as_array((ctypes.c_float * n).from_address(mem.ptr))
    h[::1024] = 0.0  # first touch on the CPU: the pages start on the host
    how = "none"
    if mode == "prefetch":
        dev = cp.cuda.Device().id
        try:
            cp.cuda.runtime.memPrefetchAsync(mem.ptr, nbytes, dev, cp.cuda.Stream.null.ptr)
            how = "cudaMemPrefetchAsync"
        except Exception as e:  # CUDA 13 changed the call's signature; the GPU's first touch migrates as well
            how = f"first GPU touch ({type(e).__name__})"
        g += 1.0
        cp.cuda.Device().synchronize()
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        if mode == "paging":
            h[::1024] += 1.0  # the CPU's touch: every page comes back to the host
        g += 1.0  # the GPU's touch
        cp.cuda.Device().synchronize()
        steps += 1
    dt = time.perf_counter() - t0
    print(json.dumps({"mode": mode, "bytes": nbytes, "free": free, "total": total, "steps": steps,
                      "step_ms": 1e3 * dt / max(steps, 1), "seconds": dt, "prefetch": how}))
    return 0


def report_of(out):
    for f in sorted(glob.glob(os.path.join(out, "*.json"))):
        if f.endswith("-crash.json"):
            continue
        with open(f) as fh:
            r = json.load(fh)
        if "managed_memory" in r:
            return r
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli", nargs="?")
    ap.add_argument("runs", nargs="?")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--child")
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.seconds, a.mib)
    here = os.path.abspath(__file__)
    site_line = next(i for i, l in enumerate(open(here), 1) if l.rstrip().endswith("# MANAGED-SITE"))
    rows = []
    for mode in ("paging", "prefetch"):
        out = os.path.join(a.runs, mode)
        os.makedirs(out, exist_ok=True)
        cmd = [a.cli, "run", "--quiet", "--out", out, "--", sys.executable, here, "--child", mode,
               "--seconds", str(a.seconds), "--mib", str(a.mib)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        facts = {}
        for line in p.stdout.splitlines():
            if line.startswith("{"):
                facts = json.loads(line)
        r = report_of(out)
        m = (r or {}).get("managed_memory", {})
        devs = m.get("devices", [])
        d = devs[0] if devs else {}
        f = m.get("findings", [])
        rows.append({"mode": mode, "exit": p.returncode, "facts": facts, "device": d, "findings": f,
                     "stderr": p.stderr[-400:]})
    print(f"# Managed memory over the bus, under cudashim ({time.strftime('%Y-%m-%d')})\n")
    print(f"The buffer is allocated at managed_paging.py:{site_line}. Estimated bytes: NVML's PCIe throughput "
          "(~20 ms readings, one a tick) scaled to the tick, copies included (docs/managed-memory.md).\n")
    print("| run | exit | buffer MiB | steps | ms/step | prefetch | readings | est. HtoD MiB | est. DtoH MiB | "
          "expected each way MiB | paging share | finding | where |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        fa, d, f = row["facts"], row["device"], row["findings"]
        mib = fa.get("bytes", 0) >> 20
        expected = mib * fa.get("steps", 0) if row["mode"] == "paging" else 0
        where = f[0]["sites"][0]["where"] if f and f[0].get("sites") else (d.get("sites") or [{}])[0].get("where", "")
        print(f"| {row['mode']} | {row['exit']} | {mib} | {fa.get('steps', '-')} | {fa.get('step_ms', 0):.1f} | "
              f"{fa.get('prefetch', '-')} | {d.get('samples', 0)} | {d.get('est_htod_bytes', 0) / 2**20:.0f} | "
              f"{d.get('est_dtoh_bytes', 0) / 2**20:.0f} | {expected} | {d.get('paging_share', 0)} | "
              f"{f[0]['id'] if f else 'none'} | {where or '-'} |")
    for row in rows:
        if row["exit"] != 0 or not row["facts"]:
            print(f"\n{row['mode']}: exit {row['exit']}: {row['stderr']}")
        for e in row["device"].get("evidence", []):
            print(f"- {row['mode']}: {e}")
    with open(os.path.join(a.runs, "managed_paging.json"), "w") as fh:
        json.dump(rows, fh, indent=1)
    ok = bool(rows[0]["findings"]) and not rows[1]["findings"]
    print(f"\nverdict: {'as expected' if ok else 'NOT as expected'}: finding in the paging run "
          f"{'yes' if rows[0]['findings'] else 'no'}, in the prefetch control {'yes' if rows[1]['findings'] else 'no'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
