#!/usr/bin/env python3
"""check_gpu_report.py: judge one GPU-host case from the program's JSON line and the
shim's report; print the reasons and append one row for the results table.

  check_gpu_report.py --case NAME --ran TEXT --stdout FILE --reports DIR [--rc N]
                      [--want-cudart SUBSTR] [--cudashim BIN] [--rows FILE]
  check_gpu_report.py --table ROWS_FILE          (prints the Markdown table)

The program's JSON line (the last stdout line starting with '{') says what it did;
its "program" field picks the rules:
  cuda_counts    runtime-API program (static or shared libcudart). It names only
                 runtime calls, so:
                 - shared libcudart: every runtime ABI it called that cudashim hooks
                   (catalog/hooks.def runtime rows) has exactly that api.<ABI>.calls; runtime ABIs
                   cudashim does not hook (__cudaLaunchKernel, the <<<>>> stub's entry
                   since CUDA 12.8/13.0) are noted, and no runtime row is counted that
                   the program did not call;
                 - static libcudart: no runtime row at all;
                 - both: the sum over the driver ABIs of each operation family equals
                   the runtime count (cuMemAlloc_v2+cuMemAllocPitch_v2 == cudaMalloc,
                   cuLaunchKernel*+cuLaunchKernelEx*+... == launches, cuMemcpy* calls and
                   bytes == cudaMemcpy calls and bytes, ...), and the ledger (device 0
                   live/peak bytes, kinds.device/async allocs and frees, host_pinned).
  driver_counts  driver-API program: exact expect_calls per ABI, no other hooked
                 non-resolution ABI counted (as tests/preload/run_check.py), ledger.
  torch_loop, libtorch_loop
                 torch's caching-allocator statistics against the report:
                   segment.all.allocated       == kinds.device.allocs (and api.cudaMalloc.calls)
                   segment.all.freed           == kinds.device.frees
                   reserved_bytes.all.current  == kinds.device.live_bytes (at exit)
                   reserved_bytes.all.peak     == kinds.device.peak_bytes
                 A difference that the ledger shows as device allocations made outside
                 torch's cudaMalloc calls (cuBLAS/cuDNN/cudart internals) is reported
                 with its count and bytes as EXPLAINED, not failed blindly.
Verdicts: PASS, EXPLAINED (the counts differ only in a way the report itself accounts
for, spelled out in the row), FAIL. Exit status 0 for PASS/EXPLAINED, 1 otherwise.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

RESOLUTION = {"cuGetProcAddress", "cuGetProcAddress_v2", "cuDriverGetVersion"}
HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20


def human(n):
    if n is None:
        return "?"
    if n % MIB == 0:
        return f"{n // MIB} MiB"
    if abs(n) >= MIB:
        return f"{n} B ({n / MIB:.2f} MiB)"
    if n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} B"


def hooked_names(cudashim):
    """(driver, runtime) sets of the ABI names cudashim hooks."""
    drv, rt = set(), set()
    if cudashim and os.access(cudashim, os.X_OK):
        try:
            out = subprocess.run([cudashim, "hooks"], capture_output=True, text=True, timeout=20).stdout
            for line in out.splitlines():
                f = line.split()
                if len(f) >= 2 and f[1] in ("driver", "runtime"):
                    (rt if f[1] == "runtime" else drv).add(f[0])
            if rt:
                return drv, rt
        except (OSError, subprocess.SubprocessError):
            pass
    # Fallback: parse the table itself.
    path = os.path.join(HERE, "..", "catalog", "hooks.def")
    text = open(path).read()
    for layer, names in (("RUNTIME", rt), ("DRIVER", drv)):
        for m in re.finditer(r"^CUDASHIM_%s_PT\((\w+),\s*(\w+)," % layer, text, re.M):
            names.update({m.group(1), m.group(1) + m.group(2)})
        for m in re.finditer(r"^CUDASHIM_%s\((\w+)," % layer, text, re.M):
            names.add(m.group(1))
    return {n for n in drv if n.startswith("cu")}, {n for n in rt if n.startswith("cuda")}


def load_expect(path):
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f if l.startswith("{")]
    except OSError:
        return None
    for l in reversed(lines):
        try:
            return json.loads(l)
        except ValueError:
            continue
    return None


def pick_report(folder, pid, notes):
    reports = []
    for p in sorted(glob.glob(os.path.join(folder, "cudashim-*.json"))):
        try:
            with open(p) as f:
                reports.append(json.load(f))
        except (OSError, ValueError) as e:
            notes.append(f"unreadable report {os.path.basename(p)}: {e}")
    if not reports:
        return None, 0
    if pid is not None:
        for r in reports:
            if r.get("process", {}).get("pid") == pid:
                return r, len(reports)
        notes.append(f"no report has pid {pid}; took the lowest pid")
    return min(reports, key=lambda r: r.get("process", {}).get("pid", 1 << 62)), len(reports)


def calls(api, names):
    return sum(api.get(n, {}).get("calls", 0) for n in names)


def row_calls(rows):
    return "{" + ", ".join(f"{n}: {r['calls']}" for n, r in rows.items()) + "}"


def device0(rep):
    for d in rep.get("memory", {}).get("devices", []):
        if d.get("device") == 0:
            return d
    return {}


def kind(dev, k):
    return dev.get("kinds", {}).get(k, {})


class Judge:
    def __init__(self):
        self.fails, self.explained, self.notes = [], [], []

    def eq(self, what, got, want):
        ok = got == want
        if not ok:
            self.fails.append(f"{what}: report {got}, expected {want}")
        return ok

    def verdict(self):
        return "FAIL" if self.fails else ("EXPLAINED" if self.explained else "PASS")


def driver_rows_by_family(api, family, layer="driver"):
    return {n: r for n, r in api.items() if r.get("family") == family and r.get("layer", "driver") == layer}


def check_ledger(j, rep, dev_exp, kinds_exp, host_exp):
    d0 = device0(rep)
    if not d0:
        j.fails.append("memory.devices has no device 0")
        return
    for k in ("live_bytes", "peak_bytes"):
        if k in dev_exp:
            j.eq(f"memory.devices[0].{k}", d0.get(k), dev_exp[k])
    for kname, want in kinds_exp.items():
        got = kind(d0, kname)
        for f, v in want.items():
            j.eq(f"device 0 kinds.{kname}.{f}", got.get(f, 0), v)
    host = (rep.get("memory", {}).get("host") or {}).get("kinds", {})
    for kname, want in host_exp.items():
        for f, v in want.items():
            j.eq(f"host kinds.{kname}.{f}", host.get(kname, {}).get(f, 0), v)
    mem = rep.get("memory", {})
    if mem.get("unknown_frees"):
        j.notes.append(f"ledger unknown_frees = {mem['unknown_frees']}")
    if mem.get("ledger_overflows"):
        j.fails.append(f"ledger_overflows = {mem['ledger_overflows']}")


def check_cuda_counts(j, exp, rep, want_cudart, cudashim):
    api = rep.get("api", {})
    _, rt_hooked = hooked_names(cudashim)
    cud = exp.get("cudart", {})
    linkage = cud.get("linkage")
    loaded = cud.get("loaded")
    j.notes.append(f"cudart {linkage}{' ' + loaded if loaded else ''}, header {cud.get('header_version')}, "
                   f"runtime {cud.get('runtime_version')}, driver {cud.get('driver_version')}")
    if want_cudart == "static":
        j.eq("libcudart linkage", linkage, "static")
    elif want_cudart:
        if not loaded or want_cudart not in os.path.basename(loaded):
            j.fails.append(f"libcudart loaded: {loaded}, wanted {want_cudart}")
    rt_calls = exp.get("runtime_calls", {})
    runtime_rows = {n: r for n, r in api.items() if r.get("layer") == "runtime"}
    if linkage == "shared":
        for abi, n in sorted(rt_calls.items()):
            if abi in rt_hooked:
                j.eq(f"api.{abi}.calls", api.get(abi, {}).get("calls", 0), n)
            else:
                j.notes.append(f"{abi} x{n}: not a hooked runtime ABI (seen at the driver level only)")
                if abi in api:
                    j.fails.append(f"api.{abi} counted though cudashim does not hook it")
        for abi, r in sorted(runtime_rows.items()):
            if abi not in rt_calls:
                j.fails.append(f"api.{abi}.calls = {r.get('calls')} but the program never called {abi}")
    elif runtime_rows:
        j.fails.append(f"static cudart, yet runtime rows were counted: {sorted(runtime_rows)}")
    d = exp.get("device0", {})
    fam = [
        ("device allocs", ["cuMemAlloc_v2", "cuMemAllocPitch_v2"], d.get("device_allocs")),
        ("device frees", ["cuMemFree_v2"], d.get("device_frees")),
        ("async allocs", ["cuMemAllocAsync", "cuMemAllocAsync_ptsz", "cuMemAllocFromPoolAsync",
                          "cuMemAllocFromPoolAsync_ptsz"], d.get("async_allocs")),
        ("async frees", ["cuMemFreeAsync", "cuMemFreeAsync_ptsz"], d.get("async_frees")),
        ("pinned allocs", ["cuMemAllocHost_v2", "cuMemHostAlloc"], rt_calls.get("cudaMallocHost", 0)),
        ("pinned frees", ["cuMemFreeHost"], rt_calls.get("cudaFreeHost", 0)),
        ("stream syncs", ["cuStreamSynchronize", "cuStreamSynchronize_ptsz"], rt_calls.get("cudaStreamSynchronize", 0)),
        ("device syncs", ["cuCtxSynchronize", "cuCtxSynchronize_v2"], rt_calls.get("cudaDeviceSynchronize", 0)),
    ]
    seen = set()
    for label, names, want in fam:
        present = {n: api[n]["calls"] for n in names if n in api}
        seen.update(present)
        j.eq(f"driver {label} {present or '{}'}", calls(api, names), want)
    launch_rows = driver_rows_by_family(api, "launch")
    seen.update(launch_rows)
    j.eq(f"driver launches {row_calls(launch_rows)}",
         sum(r["calls"] for r in launch_rows.values()), exp.get("launches"))
    copy_rows = {n: r for n, r in driver_rows_by_family(api, "copy").items() if n.startswith("cuMemcpy")}
    seen.update(copy_rows)
    j.eq(f"driver copies {row_calls(copy_rows)}",
         sum(r["calls"] for r in copy_rows.values()), exp.get("copies"))
    j.eq("driver copy bytes", sum(r.get("bytes", 0) for r in copy_rows.values()), exp.get("copy_bytes"))
    check_ledger(j, rep, {"live_bytes": d.get("live_bytes"), "peak_bytes": d.get("peak_bytes")},
                 {"device": {"allocs": d.get("device_allocs"), "frees": d.get("device_frees")},
                  "async": {"allocs": d.get("async_allocs"), "frees": d.get("async_frees")}},
                 {"host_pinned": {k: v for k, v in exp.get("host_pinned", {}).items() if k in ("allocs", "frees")}})
    others = {n: r["calls"] for n, r in api.items()
              if r.get("layer") == "driver" and n not in seen and n not in RESOLUTION}
    if others:
        j.notes.append("cudart's own driver calls: " + ", ".join(f"{n} {c}" for n, c in sorted(others.items())))
    errs = {n: r["errors"] for n, r in api.items() if r.get("errors")}
    if errs:
        j.notes.append(f"rows with errors: {errs}")
    s = exp.get("runtime_calls", {})
    expected = (f"cudaMalloc {s.get('cudaMalloc')}, launches {exp.get('launches')}, cudaMemcpy {exp.get('copies')} "
                f"({human(exp.get('copy_bytes'))}), mallocAsync {s.get('cudaMallocAsync')}, live {human(d.get('live_bytes'))}")
    d0 = device0(rep)
    observed = (f"cuMemAlloc {calls(api, ['cuMemAlloc_v2', 'cuMemAllocPitch_v2'])}, "
                f"launch {sum(r['calls'] for r in launch_rows.values())}, "
                f"cuMemcpy {sum(r['calls'] for r in copy_rows.values())} "
                f"({human(sum(r.get('bytes', 0) for r in copy_rows.values()))}), "
                f"allocAsync {calls(api, ['cuMemAllocAsync', 'cuMemAllocAsync_ptsz', 'cuMemAllocFromPoolAsync', 'cuMemAllocFromPoolAsync_ptsz'])}, "
                f"live {human(d0.get('live_bytes'))}")
    if linkage == "shared":
        observed += (f"; runtime rows: " + ", ".join(f"{n} {r['calls']}" for n, r in sorted(runtime_rows.items())))
    return expected, observed


def check_driver_counts(j, exp, rep):
    api = rep.get("api", {})
    want = exp.get("expect_calls", {})
    for abi, n in sorted(want.items()):
        j.eq(f"api.{abi}.calls", api.get(abi, {}).get("calls", 0), n)
    for abi, r in sorted(api.items()):
        if abi in want or abi in RESOLUTION:
            continue
        j.fails.append(f"api.{abi}.calls = {r.get('calls')} but the program never called {abi}")
    copy_rows = {n: r for n, r in api.items() if r.get("family") == "copy"}
    j.eq("copy bytes", sum(r.get("bytes", 0) for r in copy_rows.values()), exp.get("copy_bytes"))
    check_ledger(j, rep, exp.get("expect_device0", {}), exp.get("expect_kinds", {}), exp.get("expect_host", {}))
    errs = {n: r["errors"] for n, r in api.items() if r.get("errors")}
    if errs:
        j.fails.append(f"rows with errors: {errs}")
    d0 = device0(rep)
    expected = f"{len(want)} ABIs, {sum(want.values())} calls, live {human(exp.get('expect_device0', {}).get('live_bytes'))}"
    exact = sum(1 for a, n in want.items() if api.get(a, {}).get("calls", 0) == n)
    extra = [a for a in api if a not in want and a not in RESOLUTION]
    observed = (f"{exact}/{len(want)} ABIs exact, {sum(api.get(a, {}).get('calls', 0) for a in want)} calls"
                f"{', extra: ' + ','.join(extra) if extra else ''}, live {human(d0.get('live_bytes'))}")
    return expected, observed


def check_torch(j, exp, rep):
    api = rep.get("api", {})
    st = exp.get("memory_stats", {})
    d0 = device0(rep)
    dk = kind(d0, "device")
    seg_alloc = st.get("segment.all.allocated")
    seg_freed = st.get("segment.all.freed")
    res_cur = st.get("reserved_bytes.all.current")
    res_peak = st.get("reserved_bytes.all.peak")
    j.notes.append(f"torch {exp.get('torch')}, cuda {exp.get('cuda', '?')}, backend {exp.get('allocator_backend', '?')}, "
                   f"alloc_conf '{exp.get('alloc_conf', '')}', {exp.get('steps')} steps in {exp.get('seconds')} s, "
                   f"loss {exp.get('loss')}")
    j.notes.append("memory_stats: " + json.dumps(st))
    j.notes.append("ledger device 0: " + json.dumps(d0))
    missing = [k for k in ("segment.all.allocated", "segment.all.freed", "reserved_bytes.all.current",
                           "reserved_bytes.all.peak") if st.get(k) is None]
    if missing:
        j.fails.append(f"the program's memory_stats lack {missing}")
        return "-", "-"
    rt_malloc = api.get("cudaMalloc", {}).get("calls")
    rt_free = api.get("cudaFree", {}).get("calls")
    drv_alloc = calls(api, ["cuMemAlloc_v2", "cuMemAllocPitch_v2"])
    j.notes.append(f"api: cudaMalloc {rt_malloc}, cudaFree {rt_free}, cuMemAlloc_v2 {api.get('cuMemAlloc_v2', {}).get('calls')}, "
                   f"cuMemFree_v2 {api.get('cuMemFree_v2', {}).get('calls')}")
    # Runtime rows: torch's allocator makes one cudaMalloc per segment (through the PLT).
    if rt_malloc is None:
        j.fails.append("no api.cudaMalloc row: the runtime hooks did not see torch's cudaMalloc")
    if "num_device_alloc" in st:
        j.notes.append(f"torch num_device_alloc {st['num_device_alloc']} / num_device_free {st.get('num_device_free')} "
                       f"(cudaMalloc + cuMemMap calls by the allocator)")
    if rt_free is not None and seg_freed is not None and rt_free != seg_freed:
        j.notes.append(f"api.cudaFree.calls {rt_free} vs segment.all.freed {seg_freed} "
                       f"(cudaFree(nullptr) context probes count as calls)")
    launch_rt = {n: r["calls"] for n, r in api.items() if r.get("family") == "launch" and r.get("layer") == "runtime"}
    launch_drv = {n: r["calls"] for n, r in api.items() if r.get("family") == "launch" and r.get("layer") != "runtime"}
    j.notes.append(f"launches: runtime rows {launch_rt}, driver rows {launch_drv} (torch's <<<>>> stubs call "
                   f"__cudaLaunchKernel, which cudashim does not hook at the runtime level)")
    for other in ("vmm_device", "async", "managed"):
        if kind(d0, other):
            j.notes.append(f"device 0 also has kind {other}: {json.dumps(kind(d0, other))}")
    allocs, frees = dk.get("allocs", 0), dk.get("frees", 0)
    live, peak = dk.get("live_bytes", 0), dk.get("peak_bytes", 0)
    extra_allocs = allocs - (seg_alloc or 0)
    extra_frees = frees - (seg_freed or 0)
    extra_live = live - (res_cur or 0)
    exact = (allocs == seg_alloc and frees == seg_freed and live == res_cur and peak == res_peak
             and rt_malloc == seg_alloc)
    if not exact and rt_malloc is not None:
        diff = (f"cudaMalloc calls {rt_malloc} vs segments {seg_alloc}; ledger allocs {allocs} vs segments {seg_alloc} ({extra_allocs:+d}), frees {frees} vs {seg_freed} "
                f"({extra_frees:+d}), live {human(live)} vs reserved {human(res_cur)} ({extra_live:+d} B), "
                f"peak {human(peak)} vs reserved peak {human(res_peak)} ({peak - (res_peak or 0):+d} B)")
        # Accountable: the shim saw MORE than torch's allocator made, consistently at
        # the runtime rows and in the ledger (allocations by cuBLAS/cuDNN/cudart
        # internals, or segments freed after the stats were read). Seeing fewer is a
        # failure: the shim missed allocations.
        outside_ok = (rt_malloc is not None and rt_malloc >= (seg_alloc or 0) and extra_allocs >= 0
                      and extra_frees >= 0 and extra_live >= 0 and peak >= (res_peak or 0))
        if outside_ok:
            j.explained.append(diff + f": {extra_allocs} device allocation(s) outside torch's caching allocator "
                               f"({rt_malloc - (seg_alloc or 0)} of them through the shared libcudart's cudaMalloc; "
                               f"{human(extra_live)} live at exit)"
                               + (f", {extra_frees} free(s) more than torch's (outside allocations freed, or "
                                  f"segments freed after the stats were read)" if extra_frees else ""))
        else:
            j.fails.append(diff)
    errs = {n: r["errors"] for n, r in api.items() if r.get("errors")}
    if errs:
        j.notes.append(f"rows with errors: {errs}")
    expected = (f"segments {seg_alloc} made / {seg_freed} freed, reserved {human(res_cur)} now, peak {human(res_peak)}")
    observed = (f"device allocs {allocs} (cudaMalloc {rt_malloc}, cuMemAlloc {drv_alloc}) / frees {frees}, "
                f"live {human(live)}, peak {human(peak)}")
    return expected, observed


def table(rows_file):
    rows = []
    with open(rows_file) as f:
        for l in f:
            if l.strip():
                rows.append(json.loads(l))
    out = ["| case | what ran | expected | observed | pass |", "|---|---|---|---|---|"]
    for r in rows:
        cell = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
        v = r["verdict"]
        if r.get("why"):
            v += ": " + "; ".join(r["why"])[:400]
        out.append(f"| {cell(r['case'])} | {cell(r['ran'])} | {cell(r['expected'])} | {cell(r['observed'])} | {cell(v)} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case")
    ap.add_argument("--ran", default="")
    ap.add_argument("--stdout")
    ap.add_argument("--reports")
    ap.add_argument("--rc", type=int, default=0)
    ap.add_argument("--baseline-rc", default="", help="exit status of the same run without the shim (a note)")
    ap.add_argument("--want-cudart", default="", help="'static', or a libcudart file name that must be the one loaded")
    ap.add_argument("--cudashim", default=os.path.join(HERE, "..", "build", "bin", "cudashim"))
    ap.add_argument("--rows", help="append the row (JSON) to this file")
    ap.add_argument("--table", help="print the Markdown table of a rows file and exit")
    a = ap.parse_args()
    if a.table:
        print(table(a.table))
        return 0
    j = Judge()
    expected = observed = "-"
    exp = load_expect(a.stdout) if a.stdout else None
    if a.rc != 0:
        j.fails.append(f"the program exited {a.rc}" + (" (timeout)" if a.rc in (124, 137) else ""))
    if a.baseline_rc not in ("", "-"):
        j.notes.append(f"the same run without the shim exited {a.baseline_rc}")
        if a.baseline_rc != "0":
            j.fails.append(f"the program fails without the shim too (exit {a.baseline_rc})")
    if exp is None:
        j.fails.append("the program printed no JSON line")
    else:
        rep, nrep = pick_report(a.reports, exp.get("pid"), j.notes)
        if rep is None:
            j.fails.append(f"no cudashim report in {a.reports}")
        else:
            if nrep > 1:
                j.notes.append(f"{nrep} reports in the folder (child processes); judged pid {rep['process']['pid']}")
            if rep.get("schema") != "cudashim.report/1":
                j.fails.append(f"schema {rep.get('schema')!r}")
            j.notes.append(f"libcuda: {rep.get('driver', {}).get('libcuda_loaded')}; interposition: "
                           + json.dumps(rep.get("interposition", {})))
            prog = exp.get("program")
            if prog == "cuda_counts":
                expected, observed = check_cuda_counts(j, exp, rep, a.want_cudart, a.cudashim)
            elif prog == "driver_counts":
                expected, observed = check_driver_counts(j, exp, rep)
            elif prog in ("torch_loop", "libtorch_loop"):
                expected, observed = check_torch(j, exp, rep)
            else:
                j.fails.append(f"unknown program {prog!r}")
    verdict = j.verdict()
    why = j.fails or j.explained
    print(f"== {a.case}: {verdict}")
    for f in j.fails:
        print(f"  FAIL  {f}")
    for e in j.explained:
        print(f"  DIFF  {e}")
    for n in j.notes:
        print(f"  note  {n}")
    row = {"case": a.case, "ran": a.ran, "expected": expected, "observed": observed, "verdict": verdict,
           "why": why, "notes": j.notes}
    if a.rows:
        with open(a.rows, "a") as f:
            f.write(json.dumps(row) + "\n")
    return 0 if verdict in ("PASS", "EXPLAINED") else 1


if __name__ == "__main__":
    sys.exit(main())
