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

--split (issue 36; run_after_merge.sh's idlesplit step): the loops plus cnn-readback, sampling on
only (the profiler's reference run, then the shim's), and a table of the split the diagnosis was
decided from (after syncs, host between launches, unexplained, in points of the steady state)
beside the profiler's idle share. Exit status 1 when a run's diagnosis contradicts its own split
(contradiction(): the parts do not add up to the idle, or the diagnosis is not the largest part)
or a run failed; a run with too few samples for a diagnosis (unknown) is said, not failed.
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
SPLIT_LOOPS = LOOPS + ("cnn-readback",)
EXPECTED = {"gpu-bound": "gpu-bound", "input-bound": "input-bound", "sync-bound": "sync-bound",
            "launch-bound": "launch-bound", "cnn-readback": "launch-bound"}
HOST_PARTS = ("launch-bound", "input-bound", "host-bound")


def contradiction(dev):
    """Why a report's gpu_time device's diagnosis contradicts its own idle_split, or None.

    The split's parts must add up to its idle share, and the diagnosis must name the largest
    part: sync-bound after syncs, launch-/input-/host-bound the host between launches,
    unexplained the rest (ties go to the syncs, then the host). gpu-bound and unknown need none."""
    g = dev.get("diagnosis")
    if g in ("gpu-bound", "unknown", None):
        return None
    s = dev.get("idle_split")
    if not s:
        return f"diagnosis {g} without an idle_split"
    parts = s["after_syncs"] + s["host_between"] + s["unexplained"]
    if abs(parts - s["idle"]) > 0.002:
        return f"the parts add up to {parts:.4f}, not the idle share {s['idle']:.4f}"
    order = [("sync-bound", s["after_syncs"]), ("host", s["host_between"]), ("unexplained", s["unexplained"])]
    largest = max(order, key=lambda p: p[1])[0]  # max keeps the first of equals: the tie order
    named = "host" if g in HOST_PARTS else g
    if named != largest:
        return (f"diagnosis {g}, but the largest part is {largest} (after syncs {s['after_syncs']:.3f}, host between "
                f"{s['host_between']:.3f}, unexplained {s['unexplained']:.3f})")
    return None


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
    row["idle_split"] = dev.get("idle_split")
    row["summary"] = dev.get("summary")
    row["contradiction"] = contradiction(dev)
    row["precise"] = gt.get("precise")  # gpu/realworld/precise_compare.py reads it
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cli")
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--split", action="store_true", help="the idle split's table and check (issue 36)")
    a = ap.parse_args()
    rows = []
    for loop in SPLIT_LOOPS if a.split else LOOPS:
        if a.only and loop not in a.only.split(","):
            continue
        for sampling in (True,) if a.split else (True, False):
            try:
                rows.append(run_one(a.cli, os.path.join(a.out, f"{loop}-{'on' if sampling else 'off'}"), loop,
                                    a.seconds, sampling))
            except Exception as e:  # a row, not the end of the table
                rows.append(dict(loop=loop, sampling=sampling, error=f"{type(e).__name__}: {e}"[:300]))
            print(f"idle_compare: {loop} sampling {'on' if sampling else 'off'}: "
                  f"{rows[-1].get('error') or 'steady idle ' + pct(rows[-1].get('steady'))}", flush=True)
    with open(os.path.join(a.out, "idle_compare.json"), "w") as f:
        json.dump(rows, f, indent=1)
    if a.split:
        return split_table(rows)
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


def split_table(rows):
    """The idlesplit step's table; 1 when a diagnosis contradicts its split or is missing."""
    print()
    print("| loop | profiler idle % | cudashim idle % (steady) | after syncs, points | host between launches, points | "
          "unexplained, points | kernels a step | host us per launch | diagnosis (expected) | summary | check |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|")
    bad = 0
    for r in rows:
        if "error" in r:
            print(f"| {r['loop']} | ERROR: {r['error']} | | | | | | | | | FAIL |")
            bad += 1
            continue
        s = r.get("idle_split") or {}
        p_idle = (r.get("reference") or {}).get("idle_pct")
        pts = lambda k: "-" if k not in s else f"{100.0 * s[k]:.1f}"
        check = "ok" if r.get("contradiction") is None else "FAIL: " + r["contradiction"]
        if r.get("diagnosis") in (None, "unknown") and check == "ok":
            check = "ok (no diagnosis: too few samples)"
        bad += check.startswith("FAIL")
        print(f"| {r['loop']} | {p_idle} | {pct(s.get('idle', r.get('steady')))} | {pts('after_syncs')} | {pts('host_between')} | "
              f"{pts('unexplained')} | {s.get('launches_per_step', '-')} | {round(s.get('host_ns_per_launch', 0) / 1000, 1) if s else '-'} | "
              f"{r.get('diagnosis')} ({EXPECTED[r['loop']]}) | {r.get('summary') or '-'} | {check} |")
    print()
    print(f"idle_compare --split: {len(rows) - bad} of {len(rows)} runs agree with their split")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
