#!/usr/bin/env python3
"""fleet_publish_cost.py SHIM FAKECUDA_DIR SYNC_RULES [SECONDS]: what publishing the fleet record costs the job.

The same test-double loop (tests/progs/sync_rules readback, its syncs delayed so that it runs
about SECONDS) under the shim with fleet.dir off and on, alternating, 2 rounds; the CPU time of
the shim's background thread (`cudashim-flush`, which does the publishing) is read from
/proc/<pid>/task/<tid>/schedstat (ns) just before the loop ends. The hooks never publish: the hot path is
the same either way. Prints a Markdown table.
"""
import os
import subprocess
import sys
import tempfile
import time


def flush_cpu(pid):
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            if open(f"/proc/{pid}/task/{tid}/comm").read().strip() == "cudashim-flush":
                # schedstat's first field: time on a CPU in ns (stat's utime+stime count 10 ms ticks)
                return int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0]) / 1e9
        except OSError:
            pass
    return None


def run(shim, fake, prog, seconds, fleet_dir):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=tmp, CUDASHIM_SUMMARY="0",
                   CUDASHIM_FLEET_DIR=fleet_dir or "off", FAKECUDA_SYNC_DELAY_US=str(int(seconds * 1e6 / 40)))
        p = subprocess.Popen([prog, "readback"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.monotonic()
        cpu = None
        while p.poll() is None and time.monotonic() - t0 < seconds - 1:
            time.sleep(0.2)
            cpu = flush_cpu(p.pid) or cpu
        wall = time.monotonic() - t0
        p.wait()
        return cpu, wall


def main():
    shim, fake, prog = (os.path.abspath(a) for a in sys.argv[1:4])
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 20
    rows = []
    for rnd in (1, 2):
        for side in ("off", "on"):
            with tempfile.TemporaryDirectory() as fleet:
                cpu, wall = run(shim, fake, prog, seconds, fleet if side == "on" else None)
                rows.append((rnd, side, cpu, wall, len(os.listdir(fleet)) if side == "on" else 0))
    print("| round | fleet record | flush thread CPU (s) | over (s) | CPU per second (ms) | records |")
    print("|---|---|---|---|---|---|")
    for rnd, side, cpu, wall, recs in rows:
        print(f"| {rnd} | {side} | {cpu:.4f} | {wall:.1f} | {1000 * cpu / wall:.3f} | {recs} |")


if __name__ == "__main__":
    main()
