#!/usr/bin/env python3
"""drain_idle.py SHIM FAKECUDA_DIR PROG SCHEMA: the GPU idle a sync leaves, per step, at its site.

tests/progs/drain_idle.cpp drains the queue every step (cudaDeviceSynchronize, or a 4-byte
cudaMemcpy to the host) and then works GAP_MS on the host before the next launch. The sync's
finding must carry ~GAP_MS of gpu_idle_after_per_step_ns beside its blocked time (29 gaps over
30 steps: the last drain has no launch after it); with no host work between the sync and the
next launch it must be ~0. The exit summary shows it beside the blocked time, and the report
keeps to docs/report-schema.md.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

STEPS = 30
GAP_MS = 20
# mode -> the finding its site makes (cudaMemcpy of 4 bytes is copy.synchronous: its row has no direction)
MODES = {"sync": "sync.explicit-in-loop", "readback": "copy.synchronous"}  # cudaMemcpy: a blocking copy


def run(shim, fake, prog, mode, gap_ms):
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="warn")
        p = subprocess.run([prog, mode, str(gap_ms)], env=env, capture_output=True, text=True, timeout=120)
        paths = glob.glob(os.path.join(out, "cudashim-*.json"))
        reps = [json.load(open(f)) for f in paths]
        return p, reps, [open(f).read() for f in paths]


def main():
    shim, fake, prog, schema = sys.argv[1:5]
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hygiene"))
    import check_report_schema
    rows = check_report_schema.load_schema(schema)
    errors = []
    for mode, fid in MODES.items():
        for gap_ms in (GAP_MS, 0):
            label = f"{mode} gap {gap_ms} ms"
            p, reps, texts = run(shim, fake, prog, mode, gap_ms)
            if p.returncode != 0 or len(reps) != 1:
                errors.append(f"{label}: exit {p.returncode}, {len(reps)} reports: {p.stderr[-500:]}")
                continue
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as t:
                t.write(texts[0])
            errors += [f"{label}: schema: {e}" for e in check_report_schema.check(rows, t.name)]
            os.unlink(t.name)
            f = [x for x in reps[0]["findings"] if x["id"] == fid]
            if not f:
                errors.append(f"{label}: no {fid}; findings {[x['id'] for x in reps[0]['findings']]}")
                continue
            f = f[0]
            if "gpu_idle_after_per_step_ns" not in f or not f["sites"] or "gpu_idle_after_ns" not in f["sites"][0]:
                errors.append(f"{label}: {fid} has no gpu_idle_after_per_step_ns (or its site no gpu_idle_after_ns)")
                continue
            per_step = f["gpu_idle_after_per_step_ns"]
            site = f["sites"][0]
            print(f"{label}: {fid} steps {f['steps']} blocked/step {f['blocked_per_step_ns']} ns, "
                  f"idle/step {per_step} ns, site gaps {site['gpu_idle_after_count']}")
            if f["steps"] != STEPS:
                errors.append(f"{label}: {f['steps']} steps, expected {STEPS}")
            if site["gpu_idle_after_count"] != STEPS - 1:
                errors.append(f"{label}: {site['gpu_idle_after_count']} gaps at the site, expected {STEPS - 1}")
            # one site: the same ticks, each converted to ns on its own (the TSC's scale: a ns of rounding)
            if abs(f["gpu_idle_after_ns"] - site["gpu_idle_after_ns"]) > 1000:
                errors.append(f"{label}: finding idle {f['gpu_idle_after_ns']} != its one site's {site['gpu_idle_after_ns']}")
            if gap_ms:
                # 29 gaps of at least GAP_MS each (nanosleep never returns early) over 30 steps
                low = (STEPS - 1) * gap_ms * 1_000_000 // STEPS
                high = gap_ms * 1_000_000 * 3
                if not low <= per_step <= high:
                    errors.append(f"{label}: idle per step {per_step} ns, expected {low}..{high}")
                if f["severity"] != "info" and "GPU idle" not in p.stderr:  # the exit summary at the warn level
                    errors.append(f"{label}: the exit summary shows no GPU idle: {p.stderr[-800:]}")
            elif per_step > 1_000_000:
                errors.append(f"{label}: idle per step {per_step} ns with the launch right after the sync, expected ~0")
    for e in errors:
        print("FAIL", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
