#!/usr/bin/env python3
"""torch_memory.py: the report's torch_memory section and the fragmentation findings.

A stand-in `torch` package (written to a temporary folder and put first on the
child's sys.path) keeps torch's allocator counters the way torch.cuda.memory_stats()
names them, and reserves its segments from the test-double runtime through ctypes,
so the ledger sees them. The shim must read those counters by itself (nothing in the
child calls it), at Python's exit and after an out-of-memory in the main thread, and
put them next to the ledger's bytes of the same moment.

Scenarios, run on every CPython found (3.11, 3.12, 3.13):
  fragmented  600 MiB reserved for a 150 MiB peak, 400 MiB of split remainders at their
              peak, 2 retries, 64 MiB outside torch: alloc.fragmentation and
              alloc.torch-retries, exact bytes
  peaks       the same peaks without split remainders (peak reserved against peak
              allocated is not fragmentation, e.g. after reset_peak_memory_stats): none
  healthy     300 MiB reserved for a 290 MiB peak, then freed (a plain cache): no finding
  split       600 MiB reserved and allocated, then 300 MiB freed inside segments still in
              use (inactive_split_bytes): alloc.fragmentation with no peak overhead
  roomy       split, and the process lives until the shim's sampler has read NVML's memory
              (80 GiB on the double): no allocation ran short and 600 MiB is under half the
              device, so alloc.fragmentation is info, its fix says there is nothing to do
  tight       roomy on a device of 1 GiB (FAKECUDA_TOTAL_MEM): 600 MiB is over half of it,
              alloc.fragmentation is a warning with the row's fix
  oom         a 512 MiB cap denies torch's next segment in the main thread; torch frees
              its 12 cached segments (not churn) and retries; the snapshot of that moment
              shows 312 MiB reserved for 10 MiB allocated
  interrupt   a KeyboardInterrupt raised inside the shim's read after the OOM reaches the
              program (it is not swallowed); the exit read still works
  not_init    torch imported, CUDA never initialized by it
  no_torch    a Python program without torch
  off         CUDASHIM_TORCH_COUNTERS=0: nothing is read
usage: torch_memory.py SHIM FAKECUDA_DIR CUDART_PATH SCHEMA
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

MiB = 1 << 20

FAKE_TORCH_CUDA = r'''
import collections, ctypes, os
_rt = ctypes.CDLL(os.environ["FAKE_CUDART"])
_initialized = False
stats = collections.Counter()

def _malloc(nbytes):
    global _initialized
    _initialized = True
    ptr = ctypes.c_void_p()
    return _rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(nbytes)), ptr

_cached = []  # (ptr, bytes) of free segments torch keeps

def reserve(nbytes, keep_cached=False):
    """A new segment, as torch's caching allocator gets one (cudaMalloc). On out of memory,
    torch frees every cached segment (cudaFree) and retries once."""
    rc, ptr = _malloc(nbytes)
    if rc != 0 and _cached:
        stats["num_alloc_retries"] += 1
        while _cached:
            p, n = _cached.pop()
            _rt.cudaFree(p)  # one line: the flush is a burst at one call site
            stats["reserved_bytes.all.current"] -= n
            stats["segment.all.current"] -= 1
        rc, ptr = _malloc(nbytes)
    if rc == 0:
        stats["reserved_bytes.all.current"] += nbytes
        stats["reserved_bytes.all.peak"] = max(stats["reserved_bytes.all.peak"], stats["reserved_bytes.all.current"])
        stats["segment.all.current"] += 1
        if keep_cached:
            _cached.append((ptr, nbytes))
    return rc

def allocate(nbytes):
    stats["allocated_bytes.all.current"] += nbytes
    stats["allocated_bytes.all.peak"] = max(stats["allocated_bytes.all.peak"], stats["allocated_bytes.all.current"])

def free(nbytes):
    stats["allocated_bytes.all.current"] -= nbytes

def is_initialized():
    return _initialized

def device_count():
    return 1

raise_in_stats = False  # as if a signal handler raised KeyboardInterrupt inside the call

def memory_stats(device=None):
    if raise_in_stats:
        raise KeyboardInterrupt
    out = collections.OrderedDict((k, 0) for k in (
        "allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
        "reserved_bytes.all.peak", "active_bytes.all.current", "inactive_split_bytes.all.current",
        "inactive_split_bytes.all.peak", "segment.all.current", "num_alloc_retries", "num_ooms"))
    out.update(stats)
    out["active_bytes.all.current"] = stats["allocated_bytes.all.current"]
    return out
'''


def child(scenario, cudart):
    if scenario == "no_torch":
        rt = ctypes_runtime(cudart)
        import ctypes
        ptr = ctypes.c_void_p()
        assert rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(MiB)) == 0
        return
    import torch.cuda as tc
    if scenario == "not_init":
        rt = ctypes_runtime(cudart)
        import ctypes
        ptr = ctypes.c_void_p()
        assert rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(MiB)) == 0
        return
    if scenario in ("fragmented", "off", "peaks"):
        for _ in range(3):
            assert tc.reserve(200 * MiB) == 0
        tc.allocate(150 * MiB)
        tc.free(50 * MiB)                     # 100 MiB allocated now, 150 at the peak
        if scenario != "peaks":
            tc.stats["num_alloc_retries"] = 2
            tc.stats["inactive_split_bytes.all.peak"] = 400 * MiB
        assert tc._malloc(64 * MiB)[0] == 0   # raw cudaMalloc past torch's allocator
    elif scenario == "healthy":
        assert tc.reserve(300 * MiB) == 0
        tc.allocate(290 * MiB)
        tc.free(290 * MiB)
    elif scenario in ("split", "roomy", "tight"):
        assert tc.reserve(600 * MiB) == 0
        tc.allocate(600 * MiB)
        tc.free(300 * MiB)
        tc.stats["inactive_split_bytes.all.current"] = 300 * MiB
        tc.stats["inactive_split_bytes.all.peak"] = 300 * MiB
        if scenario != "split":
            import time
            time.sleep(2.5)                   # the sampler reads NVML about once a second
    elif scenario == "interrupt":
        assert tc.reserve(300 * MiB) == 0
        tc.raise_in_stats = True
        try:
            tc.reserve(400 * MiB)             # denied: the shim's pending read raises inside memory_stats
            for _ in range(1000):
                pass
            print("NOT INTERRUPTED")
        except KeyboardInterrupt:
            print("INTERRUPTED")
        tc.raise_in_stats = False
    elif scenario == "oom":
        assert tc.reserve(300 * MiB) == 0
        tc.allocate(10 * MiB)
        for _ in range(12):                   # free cached segments, flushed at the OOM: not churn
            assert tc.reserve(MiB, keep_cached=True) == 0
        tc.stats["num_ooms"] += 1             # torch counts it in C++, before the call returns and raises
        assert tc.reserve(400 * MiB) != 0     # denied by the 512 MiB cap: CUDA_ERROR_OUT_OF_MEMORY
        for _ in range(100):                  # back between bytecodes: the pending read runs here
            pass
        tc.allocate(90 * MiB)                 # after the snapshot: at exit 100 MiB allocated


def ctypes_runtime(cudart):
    import ctypes
    return ctypes.CDLL(cudart)


def interpreters():
    found = []
    for cand in [sys.executable] + sorted(glob.glob("/root/.pyenv/versions/3.1[123]*/bin/python3.1[123]")) + \
            ["/usr/bin/python3.12", "/usr/bin/python3.13"]:
        if os.path.exists(cand) and os.path.realpath(cand) not in [os.path.realpath(f) for f in found]:
            found.append(cand)
    return found


def main():
    shim, fake, cudart, schema = sys.argv[1:5]
    errors, ran = [], set()
    with tempfile.TemporaryDirectory(prefix="cudashim-faketorch-") as pkg:
        os.makedirs(os.path.join(pkg, "torch", "cuda"))
        with open(os.path.join(pkg, "torch", "__init__.py"), "w") as f:
            f.write("from . import cuda\n")
        with open(os.path.join(pkg, "torch", "cuda", "__init__.py"), "w") as f:
            f.write(FAKE_TORCH_CUDA)
        for py in interpreters():
            ver = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True,
                                 text=True).stdout.strip()
            scenarios = ["fragmented", "peaks", "healthy", "split", "roomy", "tight", "oom", "interrupt", "not_init", "no_torch", "off"] if py == sys.executable \
                else ["fragmented", "oom"]
            for sc in scenarios:
                errs = run_one(py, ver, sc, shim, fake, cudart, schema, pkg)
                errors += [f"python {ver}, {sc}: {e}" for e in errs]
                ran.add(ver)
    if not ran:
        errors.append("no CPython interpreter could run the test")
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print(f"ok: torch_memory on python {', '.join(sorted(ran))}")
    return 1 if errors else 0


def run_one(py, ver, sc, shim, fake, cudart, schema, pkg):
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="error",
                   FAKE_CUDART=cudart, PYTHONPATH=pkg)
        if sc in ("oom", "interrupt"):
            env["CUDASHIM_MEM_CAP"] = "512MiB"
        if sc == "off":
            env["CUDASHIM_TORCH_COUNTERS"] = "0"
        if sc == "tight":
            env["FAKECUDA_TOTAL_MEM"] = str(1 << 30)
        p = subprocess.run([py, __file__, "--child", sc, cudart], env=env, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            return [f"child exited {p.returncode}: {p.stderr[-800:]}"]
        reports = glob.glob(os.path.join(out, "cudashim-*.json"))
        if len(reports) != 1:
            return [f"expected one report, found {reports}"]
        v = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "hygiene",
                            "check_report_schema.py"), schema, reports[0]], capture_output=True, text=True)
        errs = [] if v.returncode == 0 else [f"report does not match the schema\n{v.stdout}"]
        rep = json.load(open(reports[0]))
    if sc == "interrupt" and p.stdout.strip().splitlines()[-1:] != ["INTERRUPTED"]:
        errs.append(f"the KeyboardInterrupt raised inside the shim's read did not reach the program: {p.stdout!r}")
    tm = rep["torch_memory"]
    snaps = {s["moment"]: s["devices"] for s in tm["snapshots"]}
    ids = {f["id"]: f["count"] for f in rep["findings"]}
    by_id = {f["id"]: f for f in rep["findings"]}
    want_state = {"fragmented": "read", "peaks": "read", "healthy": "read", "split": "read", "roomy": "read", "tight": "read", "interrupt": "read", "oom": "read", "not_init": "torch_cuda_not_initialized",
                  "no_torch": "no_torch", "off": "off"}[sc]
    if tm["state"] != want_state:
        errs.append(f"state {tm['state']!r}, expected {want_state!r}")

    def row(moment):
        rows = snaps.get(moment, [])
        if len(rows) != 1 or rows[0]["device"] != 0:
            errs.append(f"expected one device-0 row at {moment}, got {rows}")
            return None
        return rows[0]

    def expect(r, **want):
        for k, v in want.items():
            if r[k] != v:
                errs.append(f"{k} = {r[k]}, expected {v}")

    if sc == "fragmented":
        r = row("exit")
        if r:
            expect(r, allocated_bytes=100 * MiB, allocated_peak_bytes=150 * MiB, reserved_bytes=600 * MiB,
                   reserved_peak_bytes=600 * MiB, segments=3, alloc_retries=2, process_bytes=664 * MiB,
                   reserved_unallocated_bytes=500 * MiB, peak_overhead_bytes=450 * MiB,
                   inactive_split_peak_bytes=400 * MiB, outside_torch_bytes=64 * MiB, fragmented=True)
        if ids.get("alloc.fragmentation") != 1 or ids.get("alloc.torch-retries") != 2:
            errs.append(f"findings {ids}: expected alloc.fragmentation x1 and alloc.torch-retries x2")
        if "oom" in snaps:
            errs.append("an oom snapshot without an out-of-memory")
    elif sc == "peaks":
        r = row("exit")
        if r:
            expect(r, peak_overhead_bytes=450 * MiB, inactive_split_bytes=0, inactive_split_peak_bytes=0,
                   fragmented=False)
        if "alloc.fragmentation" in ids or "alloc.torch-retries" in ids:
            errs.append(f"findings {ids}: peak overhead without split remainders is not fragmentation")
    elif sc == "healthy":
        r = row("exit")
        if r:
            expect(r, allocated_bytes=0, allocated_peak_bytes=290 * MiB, reserved_bytes=300 * MiB,
                   process_bytes=300 * MiB, outside_torch_bytes=0, fragmented=False)
        if "alloc.fragmentation" in ids or "alloc.torch-retries" in ids:
            errs.append(f"findings {ids}: no fragmentation finding expected")
    elif sc == "interrupt":
        if "oom" in snaps or len(snaps.get("exit", [])) != 1:
            errs.append(f"snapshots {sorted(snaps)}: expected the exit one only (the OOM read was interrupted)")
    elif sc == "split":
        r = row("exit")
        if r:
            expect(r, allocated_bytes=300 * MiB, peak_overhead_bytes=0, inactive_split_bytes=300 * MiB,
                   inactive_split_peak_bytes=300 * MiB, fragmented=True)
        if ids.get("alloc.fragmentation") != 1:
            errs.append(f"findings {ids}: expected alloc.fragmentation from the inactive split bytes")
    elif sc in ("roomy", "tight"):
        f = by_id.get("alloc.fragmentation")
        want = "info" if sc == "roomy" else "warning"
        if f is None:
            errs.append(f"findings {ids}: expected alloc.fragmentation from the inactive split bytes")
        elif f["severity"] != want or f["fix"].startswith("nothing to do") != (sc == "roomy"):
            errs.append(f"alloc.fragmentation is {f['severity']} ({f['fix']!r}), expected {want}: 600 MiB reserved of "
                        f"{'80' if sc == 'roomy' else '1'} GiB, no allocation ran short")
    elif sc == "oom":
        # Read when the interpreter next runs its pending calls after the denied cudaMalloc: in
        # real torch the cache flush runs in C++ before that; here it is Python code that may
        # come before or after (312 or 300 MiB reserved). Either way torch's counters and the
        # ledger must agree.
        r = row("oom")
        if r:
            expect(r, allocated_bytes=10 * MiB, ooms=1, fragmented=True)
            if r["reserved_bytes"] not in (300 * MiB, 312 * MiB) or r["process_bytes"] != r["reserved_bytes"] or \
                    r["reserved_unallocated_bytes"] != r["reserved_bytes"] - 10 * MiB:
                errs.append(f"oom row {r}: expected 300 or 312 MiB reserved, the ledger equal to it")
        r = row("exit")
        if r:
            expect(r, allocated_bytes=100 * MiB, reserved_bytes=300 * MiB, process_bytes=300 * MiB, alloc_retries=1,
                   fragmented=False)
        if ids.get("alloc.fragmentation") != 1 or ids.get("alloc.torch-retries") != 1:
            errs.append(f"findings {ids}: expected alloc.fragmentation from the oom snapshot and alloc.torch-retries")
        if "alloc.churn-after-warmup" in ids:
            errs.append("the cache flush after the out-of-memory (12 frees at one line) was called churn")
    else:
        if snaps:
            errs.append(f"no snapshot expected, got {tm['snapshots']}")
        if "alloc.fragmentation" in ids:
            errs.append(f"findings {ids}: no fragmentation finding expected")
    if not errs:
        print(f"python {ver}, {sc}: {tm['state']}, snapshots {sorted(snaps)}, findings {sorted(ids)}")
    return errs


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        sys.exit(0)
    sys.exit(main())
