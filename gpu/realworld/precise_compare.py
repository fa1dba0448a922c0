#!/usr/bin/env python3
"""precise_compare.py: torch.profiler's GPU idle share, cudashim's default mode (NVML) and its
precise mode (CUPTI), side by side, loop by loop, and the precise mode's cost (issue 20).

For each loop of idle_loops.py, in this one call, two processes one after the other:
  reference  idle_loops.py without the shim: torch.profiler's idle share (1 - the union of
             CUPTI's kernel/memcpy/memset intervals over K steps), the plain step time and the
             step time under the profiler;
  cudashim   `cudashim run` with CUDASHIM_GPU_PRECISE=1 (NVML sampling stays on) and idle_loops
             --no-profile: the report's gpu_time.devices[0].steady.idle (default mode),
             gpu_time.precise.devices[0].steady.idle (precise mode), the diagnosis and where it
             came from, and the loop's plain step time with the precise mode collecting.
Overhead: the precise mode's step time over the profiler's step time, and over the plain step
time without the shim, each from this call's own runs. Goal: precise within 2 points of the
profiler, default within 10.

usage: precise_compare.py CLI OUT_DIR [--seconds S] [--only a,b]; prints a markdown table and
writes OUT_DIR/precise_compare.json. Exit status 0 always (errors are rows).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from idle_compare import EXPECTED, LOOPS, pct, run_one  # noqa: E402


def points(a, b):
    return "-" if a is None or b is None else f"{a - b:+.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cli")
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    rows = []
    for loop in LOOPS:
        if a.only and loop not in a.only.split(","):
            continue
        try:
            row = run_one(a.cli, os.path.join(a.out, loop), loop, a.seconds, True, {"CUDASHIM_GPU_PRECISE": "1"})
        except Exception as e:  # a row, not the end of the table
            row = dict(loop=loop, error=f"{type(e).__name__}: {e}"[:300])
        rows.append(row)
        print(f"precise_compare: {loop}: {row.get('error') or 'done'}", flush=True)
    with open(os.path.join(a.out, "precise_compare.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print()
    print("| loop | profiler idle % | default idle % (NVML) | precise idle % (CUPTI) | precise - profiler, points | "
          "default - profiler, points | diagnosis (expected), from | precise mode | kernels, short % | "
          "step ms: plain / profiler / precise | precise / profiler | precise / plain |")
    print("|---|---:|---:|---:|---:|---:|---|---|---:|---|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['loop']} | ERROR: {r['error']} | | | | | | | | | | |")
            continue
        ref = r.get("reference") or {}
        p_idle = ref.get("idle_pct")
        d_idle = None if r.get("steady") is None else 100.0 * r["steady"]
        pr = r.get("precise") or {}
        pdev = (pr.get("devices") or [{}])[0]
        c_idle = None if not pdev.get("steady") else 100.0 * pdev["steady"]["idle"]
        plain, prof = ref.get("step_ms_plain"), ref.get("step_ms_profiled")
        mine = (r.get("profiler") or {}).get("step_ms_plain")
        mode = pr.get("mode", "-") + (f" ({pr.get('reason')})" if pr.get("reason") else "")
        if pr.get("other_profiler"):
            mode += f"; other profiler: {pr['other_profiler']}"
        kern = f"{pdev.get('kernels', '-')}, {pct(pdev.get('short_kernel_share'))}" if pdev else "-"
        print(f"| {r['loop']} | {p_idle} | {'-' if d_idle is None else f'{d_idle:.1f}'} | "
              f"{'-' if c_idle is None else f'{c_idle:.1f}'} | {points(c_idle, p_idle)} | {points(d_idle, p_idle)} | "
              f"{r.get('diagnosis')} ({EXPECTED[r['loop']]}), {r.get('diagnosis_from')} | {mode} | {kern} | "
              f"{plain} / {prof} / {mine} | {f'{mine / prof:.3f}' if mine and prof else '-'} | "
              f"{f'{mine / plain:.3f}' if mine and plain else '-'} |")
    print()
    for r in rows:
        pr = r.get("precise") or {}
        if pr:
            print(f"- {r['loop']}: libcupti {pr.get('library') or '-'} ({pr.get('found_by') or pr.get('tried')}); "
                  f"clock offset {pr.get('clock_offset_ns')} ns +- {pr.get('clock_error_ns')} ns; buffers "
                  f"{pr.get('buffers')}, misses {pr.get('buffer_misses')}, dropped {pr.get('dropped')}; evidence: "
                  f"{'; '.join(r.get('evidence') or [])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
