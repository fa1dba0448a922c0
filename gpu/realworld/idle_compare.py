#!/usr/bin/env python3
"""idle_compare.py: cudashim's GPU idle share against torch.profiler's, loop by loop (issue 20).

Each loop of idle_loops.py runs three times, each in its own process, one after the other:
without the shim under torch.profiler (CUPTI), then under `cudashim run --no-profile` with the
shim's NVML sampling on (the default mode) and off (CUDASHIM_GPU_SAMPLING=0). The profiler
stays out of the shim's runs: its start, stop and trace export are seconds of host work with
the GPU idle, which NVML would count into the steady state (seen on the H200 when both ran
in one process: the GPU-bound loop read 59 % idle).

  profiler idle   idle_loops.py's: 1 - union of CUPTI kernel/memcpy/memset intervals over a
                  record_function window of K steps
  cudashim idle   the report's gpu_time.devices[0].steady.idle (NVML's device-wide samples
                  over the shim's steady state: after the first fifth of the busy span, here
                  the loop alone) and process_steady.idle (NVML's per-process samples)
  diagnosis       gpu_time.devices[0].diagnosis, and whether gpu.idle fired
  step ms         the loop's plain step time with sampling on and off (the default mode's cost)

The windows are different runs of the same loop. The precise mode (CUPTI in the shim) is off
in these runs: its column gives the report's gpu_time.precise.mode; precise_compare.py compares
it with the profiler.

usage: idle_compare.py CLI OUT_DIR [--seconds S] [--only a,b]; prints a markdown table and
writes OUT_DIR/idle_compare.json. Exit status 0 always (errors are rows).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LOOPS = ("gpu-bound", "input-bound", "sync-bound", "launch-bound")
EXPECTED = {"gpu-bound": "gpu-bound", "input-bound": "host-bound", "sync-bound": "sync-bound",
            "launch-bound": "launch-bound"}


def pct(x):
    return "-" if x is None else f"{100.0 * x:.1f}"


def run_one(cli, out, loop, seconds, sampling, env_extra=None):
    os.makedirs(out, exist_ok=True)
    prof = os.path.join(out, "profiler.json")
    loops = [sys.executable, os.path.join(HERE, "idle_loops.py"), "--only", loop, "--seconds", str(seconds)]
    t0 = time.monotonic()
    if sampling:  # the profiler's reference, without the shim (once per loop)
        subprocess.run(loops + ["--json", os.path.join(out, "reference.json")], capture_output=True, text=True,
                       timeout=180)
    reference = None
    try:
        reference = json.load(open(os.path.join(out, "reference.json")))["rows"][0]
    except (OSError, ValueError, KeyError, IndexError):
        pass
    env = dict(os.environ, CUDASHIM_GPU_SAMPLING="1" if sampling else "0", **(env_extra or {}))
    cmd = [cli, "run", "--quiet", "--out", out, "--"] + loops + ["--no-profile", "--json", prof]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    row = dict(loop=loop, sampling=sampling, exit=p.returncode, wall_s=round(time.monotonic() - t0, 1))
    with open(os.path.join(out, "stdout.txt"), "w") as f:
        f.write(p.stdout)
    with open(os.path.join(out, "stderr.txt"), "w") as f:
        f.write(p.stderr)
    try:
        row["profiler"] = dict(json.load(open(prof))["rows"][0])
        row["reference"] = reference
    except (OSError, ValueError, KeyError, IndexError) as e:
        row["error"] = f"no profiler numbers ({e}); stderr: {p.stderr[-300:]}"
        return row
    reps = []
    for f in glob.glob(os.path.join(out, "cudashim-*.json")):
        if f.endswith("-crash.json"):
            continue
        try:
            reps.append(json.load(open(f)))
        except (OSError, ValueError):
            pass
    reps = [r for r in reps if r.get("gpu_time", {}).get("devices")] or reps
    if not reps:
        row["error"] = f"no report in {out}"
        return row
    gt = reps[0].get("gpu_time", {})
    row["mode"] = gt.get("sampling", {}).get("mode")
    row["reason"] = gt.get("sampling", {}).get("reason")
    dev = (gt.get("devices") or [{}])[0]
    for k in ("run", "steady", "process_run", "process_steady"):
        row[k] = (dev.get(k) or {}).get("idle")
        row[k + "_samples"] = (dev.get(k) or {}).get("samples")
    row["sample_period_us"] = dev.get("sample_period_us")
    row["diagnosis"] = dev.get("diagnosis")
    row["evidence"] = dev.get("evidence")
    row["health"] = dev.get("health")
    row["findings"] = [f.get("id") for f in gt.get("findings", [])]
    row["diagnosis_from"] = dev.get("diagnosis_from")
    row["precise"] = gt.get("precise")  # gpu/realworld/precise_compare.py reads it
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cli")
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    rows = []
    for loop in LOOPS:
        if a.only and loop not in a.only.split(","):
            continue
        for sampling in (True, False):
            try:
                rows.append(run_one(a.cli, os.path.join(a.out, f"{loop}-{'on' if sampling else 'off'}"), loop,
                                    a.seconds, sampling))
            except Exception as e:  # a row, not the end of the table
                rows.append(dict(loop=loop, sampling=sampling, error=f"{type(e).__name__}: {e}"[:300]))
            print(f"idle_compare: {loop} sampling {'on' if sampling else 'off'}: "
                  f"{rows[-1].get('error') or 'steady idle ' + pct(rows[-1].get('steady'))}", flush=True)
    with open(os.path.join(a.out, "idle_compare.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print()
    print("| loop | profiler idle % | cudashim idle % (device, steady) | cudashim idle % (process, steady) | "
          "difference (device - profiler), points | NVML samples (steady) | diagnosis (expected) | findings | "
          "precise mode | step ms, sampling on | step ms, sampling off | on/off |")
    print("|---|---:|---:|---:|---:|---:|---|---|---|---:|---:|---:|")
    by = {(r["loop"], r["sampling"]): r for r in rows}
    for loop in LOOPS:
        on, off = by.get((loop, True)), by.get((loop, False))
        if on is None:
            continue
        if "error" in on:
            print(f"| {loop} | ERROR: {on['error']} | | | | | | | | | | |")
            continue
        prof = on["profiler"]
        p_idle = (on.get("reference") or {}).get("idle_pct")
        diff = "-" if on.get("steady") is None or p_idle is None else f"{100.0 * on['steady'] - p_idle:+.1f}"
        s_on = prof.get("step_ms_plain")
        s_off = (off or {}).get("profiler", {}).get("step_ms_plain") if off and "error" not in off else None
        ratio = f"{s_on / s_off:.3f}" if s_on and s_off else "-"
        diag = f"{on.get('diagnosis')} ({EXPECTED[loop]})"
        print(f"| {loop} | {p_idle} | {pct(on.get('steady'))} | {pct(on.get('process_steady'))} | {diff} | "
              f"{on.get('steady_samples')} | {diag} | {', '.join(on.get('findings') or []) or '-'} | {(on.get('precise') or {}).get('mode', '-')} | "
              f"{s_on} | {s_off if s_off is not None else '-'} | {ratio} |")
    print()
    for r in rows:
        if r.get("sampling") and "error" not in r:
            h = r.get("health") or {}
            print(f"- {r['loop']}: mode {r.get('mode')} {r.get('reason') or ''}; NVML sample period "
                  f"{r.get('sample_period_us')} us; whole-run idle {pct(r.get('run'))} % device, "
                  f"{pct(r.get('process_run'))} % process; health: {h.get('samples')} samples, "
                  f"{h.get('throttled_samples')} throttled ({h.get('slowdown_reasons') or 'none'}), SM "
                  f"{h.get('sm_mhz_min')}-{h.get('sm_mhz_max')} MHz, max {h.get('temp_c_max')} C, max power "
                  f"{(h.get('power_mw_max') or 0) / 1000:.0f} W of {(h.get('power_limit_mw') or 0) / 1000:.0f} W; "
                  f"evidence: {'; '.join(r.get('evidence') or [])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
