#!/usr/bin/env python3
"""pool.py: the caching pool (CUDASHIM_POOL=1) and the out-of-memory context, end to end.

Runs tests/progs/pool_guarantee under the shim, through the test-double driver whose
kernels take time, and checks both the program's own verdict (it writes its blocks and
watches for a freed block's kernel writing them) and the report's "pool", "leaks",
"oom" and "oom_context" sections (validated against docs/report-schema.md).
Usage: pool.py SHIM FAKECUDA_DIR PROGRAM SCHEMA
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

MiB = 1 << 20
SHIM, FAKE, PROG, SCHEMA = sys.argv[1:5]
failures = []


def run(name, args, env_extra):
    with tempfile.TemporaryDirectory(prefix="cudashim-pool-") as out:
        env = dict(os.environ, LD_PRELOAD=SHIM, LD_LIBRARY_PATH=FAKE, CUDASHIM_OUT=out, **env_extra)
        p = subprocess.run([PROG, *args], env=env, capture_output=True, text=True, timeout=300)
        lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
        if p.returncode != 0 or not lines:
            failures.append(f"{name}: {PROG} {' '.join(args)} exited {p.returncode}\n{p.stdout}{p.stderr}")
            return None, None, p.stderr
        reports = glob.glob(os.path.join(out, "cudashim-*.json"))
        if len(reports) != 1:
            failures.append(f"{name}: expected one report, found {reports}")
            return None, None, p.stderr
        v = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "hygiene",
                            "check_report_schema.py"), SCHEMA, reports[0]], capture_output=True, text=True)
        if v.returncode != 0:
            failures.append(f"{name}: report does not match the schema\n{v.stdout}{v.stderr}")
        with open(reports[0]) as f:
            return json.loads(lines[-1]), json.load(f), p.stderr


def check(name, cond, what):
    if not cond:
        failures.append(f"{name}: {what}")


def pool_dev(rep):
    devs = rep["pool"]["devices"]
    return devs[0] if devs else {}


def main():
    # 1. The guarantee, with the pool off first: the program's checks hold without it
    #    (cuMemFree waits for the kernel), and the report says the pool was off.
    out, rep, _ = run("guarantee/no-pool", ["guarantee"], {"CUDASHIM_POOL": "0"})
    if rep:
        check("guarantee/no-pool", rep["pool"]["enabled"] is False and rep["pool"]["devices"] == [],
              f"pool section with the pool off: {rep['pool']}")
    # ... and with it: no block comes back while its kernel still writes it, then it does.
    out, rep, _ = run("guarantee", ["guarantee"], {"CUDASHIM_POOL": "1"})
    if rep:
        p = pool_dev(rep)
        check("guarantee", rep["pool"]["enabled"] is True, "pool not reported on")
        check("guarantee", p.get("hits", 0) >= out["min_hits"], f"hits {p.get('hits')} < {out['min_hits']}")
        check("guarantee", p.get("not_ready", 0) >= 3,
              f"not_ready {p.get('not_ready')}: each scenario should have found its freed block still in use")
        check("guarantee", p.get("fences", 0) >= 3, f"fences {p.get('fences')}")
        dev0 = [d for d in rep["memory"]["devices"] if d["device"] == 0][0]
        check("guarantee", p.get("cached_bytes") == dev0["live_bytes"],
              f"everything was freed, so what the process still holds ({dev0['live_bytes']}) must be the pool's "
              f"cached bytes ({p.get('cached_bytes')})")
        check("guarantee", rep["leaks"]["live_allocations"] == 0,
              f"cached blocks reported as leaks: {rep['leaks']}")

    # 2. The bound on cached bytes.
    out, rep, _ = run("bound", ["bound"], {"CUDASHIM_POOL": "1", "CUDASHIM_POOL_MAX_CACHED": "4MiB"})
    if rep:
        p = pool_dev(rep)
        check("bound", rep["pool"]["max_cached_bytes"] == 4 * MiB, f"max_cached_bytes {rep['pool']['max_cached_bytes']}")
        check("bound", p.get("peak_cached_bytes", 1 << 60) <= 4 * MiB, f"peak_cached_bytes {p.get('peak_cached_bytes')}")
        check("bound", p.get("cached_bytes") == 4 * MiB, f"cached_bytes {p.get('cached_bytes')}")
        check("bound", p.get("released", 0) == 12, f"released {p.get('released')}")

    # 3. Many threads, some on non-blocking streams, with kernels still running at each free.
    out, rep, _ = run("threads", ["threads", "8", "300"], {"CUDASHIM_POOL": "1", "CUDASHIM_POOL_MAX_CACHED": "16MiB"})
    if rep:
        p = pool_dev(rep)
        check("threads", p.get("hits", 0) > 0, f"no hits: {p}")
        check("threads", p.get("peak_cached_bytes", 1 << 60) <= 16 * MiB, f"peak_cached_bytes {p.get('peak_cached_bytes')}")
        check("threads", rep["oom"]["count"] == 0, f"oom {rep['oom']}")
    # 3b. The same with launches that take 100 us to queue their kernel (a busy driver). Before
    #     the fix (2026-12-01) 10 runs of 10 handed a block out while a kernel still wrote it:
    #     the launch hook marked the stream before the real call, so another thread's free
    #     recorded its event ahead of the kernel, and the launching thread's free then shared
    #     that fence. Twice, for the rarer interleavings (shim/pool.h).
    for rnd in range(2):
        run(f"threads/slow-launch #{rnd + 1}", ["threads", "8", "300"],
            {"CUDASHIM_POOL": "1", "CUDASHIM_POOL_MAX_CACHED": "16MiB", "FAKECUDA_LAUNCH_DELAY_NS": "100000"})

    # 4. Cached blocks are given back when the cap or the driver refuses, and the
    #    allocation then succeeds: no out-of-memory is recorded.
    for name, args, env in [("trim/cap", ["trim", "6", "4"], {"CUDASHIM_MEM_CAP": "8MiB"}),
                            ("trim/driver", ["trim", "12", "8"], {"FAKECUDA_TOTAL_MEM": str(16 * MiB)})]:
        out, rep, _ = run(name, args, {"CUDASHIM_POOL": "1", "CUDASHIM_LOG_LEVEL": "error", **env})
        if rep:
            p = pool_dev(rep)
            check(name, p.get("trims", 0) >= 1, f"trims {p.get('trims')}")
            check(name, rep["oom"]["count"] == 0 and rep["oom_context"] is None, f"oom {rep['oom']}")

    # 5. A real out-of-memory: its context (per device ledger, largest block, top sites).
    for name, args, env, largest, basis in [
            ("oom/cap", ["oom", "6", "4"], {"CUDASHIM_MEM_CAP": "8MiB"}, 2 * MiB, "cap"),
            ("oom/driver", ["oom", "12", "8"], {"FAKECUDA_TOTAL_MEM": str(16 * MiB)}, 4 * MiB, "driver_free"),
            ("oom/driver+pool", ["oom", "12", "8"], {"FAKECUDA_TOTAL_MEM": str(16 * MiB), "CUDASHIM_POOL": "1"},
             4 * MiB, "driver_free")]:
        out, rep, err = run(name, args, env)
        if rep:
            ctx = rep["oom_context"]
            check(name, ctx is not None, "no oom_context")
            if ctx:
                d0 = [d for d in ctx["devices"] if d["device"] == 0]
                check(name, ctx["requested_bytes"] == int(args[2]) * MiB, f"requested {ctx['requested_bytes']}")
                check(name, d0 and d0[0]["in_use_bytes"] == int(args[1]) * MiB, f"devices {ctx['devices']}")
                check(name, d0 and d0[0]["largest_block_bytes"] == largest and d0[0]["largest_block_basis"] == basis,
                      f"largest block: {ctx['devices']}, expected {largest} by {basis}")
                top = ctx["top_sites"]
                check(name, top and top[0]["bytes"] == int(args[1]) * MiB and top[0]["count"] == int(args[1])
                      and top[0]["where"] and top[0]["api"] == "cuMemAlloc_v2", f"top_sites {top}")
            check(name, "out of memory on device 0" in err and "largest block" in err,
                  f"no out-of-memory log line with its context on stderr:\n{err}")

    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("pool: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
