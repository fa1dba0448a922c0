#!/usr/bin/env python3
"""crash.py SHIM FAKECUDA_DIR PROG CLI: a crash leaves a complete flight record, and the
process still ends the way the original handler ends it.

The record carries the native backtrace of the faulting thread (recorder/backtrace.h): raw
addresses, each with its module file and load base; `cudashim report` symbolizes it
offline, and its first frame is the function that faulted (fault() in tests/progs/crash.cpp;
for abort(), main calls it; for a sticky CUDA error, main made the call). The crash is told
once: the process's event stream, cut without an exit line, reads "crashed (SIGSEGV)", never
"killed (SIGKILL)"."""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

shim, fake, prog, cli = sys.argv[1:5]
CASES = [  # mode, extra env, how it must end, the record's reason, "signal_name" or "api", the function of
    # the first frame of the backtrace that is in the program
    # (a regular expression: GCC may split main's cold path into main.cold)
    ("segv", {}, -signal.SIGSEGV, "signal", "SIGSEGV", r"fault\(\)"),
    ("abort", {}, -signal.SIGABRT, "signal", "SIGABRT", r"main(\.cold)?"),
    ("handler", {}, -signal.SIGSEGV, "signal", "SIGSEGV", r"fault\(\)"),
    ("sticky", {"FAKECUDA_FAIL_SYNC_WITH": "700"}, 3, "cuda_error", "cuStreamSynchronize", r"main(\.cold)?"),
    ("double", {}, -signal.SIGSEGV, "signal", "SIGSEGV", r"fault\(\)"),
    ("inhook", {"FAKECUDA_SYNC_DELAY_US": "2000"}, -signal.SIGSEGV, "signal", "SIGSEGV", r"fault\(\)"),
]
errors = []
for mode, extra, want_rc, reason, what, func in CASES:
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, **extra)
        p = subprocess.run([prog, mode], env=env, capture_output=True, text=True, timeout=60)
        crash = glob.glob(os.path.join(out, "cudashim-*-crash.json"))
        if p.returncode != want_rc:
            errors.append(f"{mode}: ended with {p.returncode}, expected {want_rc} (the original end)")
        if len(crash) != 1:
            errors.append(f"{mode}: {len(crash)} crash records in {os.listdir(out)}")
            continue
        rec = json.load(open(crash[0]))
        got = rec.get("signal_name") or rec.get("api")
        calls = [c["api"] for t in rec["threads"] for c in t["last_calls"]]
        # inhook: its 100 syncs push the launches out of the last-calls ring
        seen = calls.count("cuStreamSynchronize") >= 10 if mode == "inhook" else \
            calls.count("cuLaunchKernel") == 5 and "cuMemAlloc_v2" in calls
        ok = (rec["schema"] == "cudashim.crash/1" and rec["reason"] == reason and got == what and seen and
              rec["memory"]["devices"][0]["live_bytes"] == 1 << 20)
        if not ok:
            errors.append(f"{mode}: incomplete record: {json.dumps(rec)[:600]}")
        if mode == "handler" and "the program's own handler ran" not in p.stderr:
            errors.append("handler: the program's own handler did not run")
        if mode == "inhook":
            m = re.search(r"crash: (\d+) SIGUSR1 handled during 100 syncs", p.stderr)
            if not m or int(m.group(1)) < 10:
                errors.append(f"inhook: the signals did not arrive inside the syncs: {p.stderr[-300:]}")
        # The backtrace: raw addresses with their modules, symbolized by `cudashim report`.
        bt = rec.get("backtrace") or {}
        frames, modules = bt.get("frames", []), bt.get("modules", [])
        real = os.path.realpath(prog)
        in_prog = [f for f in frames if 0 <= f["module"] < len(modules) and modules[f["module"]]["path"] == real]
        want_source = "caller" if reason == "cuda_error" else "signal_frame"
        if bt.get("source") != want_source or not in_prog or (want_source == "signal_frame" and not frames[0]["pc"]):
            errors.append(f"{mode}: no backtrace from the {want_source} into {real}: {json.dumps(bt)[:500]}")
        if mode in ("segv", "handler", "double", "inhook") and frames and frames[0] is not (in_prog or [None])[0]:
            errors.append(f"{mode}: the backtrace does not start at the faulting instruction in the program: {frames[:2]}")
        shown = subprocess.run([cli, "report", out], capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"),
                               timeout=60).stdout
        bt_lines = [l.strip() for l in shown.splitlines() if re.match(r"\s+#\d+ ", l)]
        first_in_prog = next((l for l in bt_lines if " in crash)" in l or "crash!" in l), "")
        if not re.search(rf"\(({func}) in crash\)$", first_in_prog) or "crash.cpp:" not in first_in_prog:
            errors.append(f"{mode}: the first frame in the program is not {func} at a line of crash.cpp: "
                          f"{bt_lines[:6]}")
        if "SIGKILL" in shown or (reason == "signal" and mode != "abort" and f"crashed ({what}" not in shown):
            errors.append(f"{mode}: the crash is not told once as a crash: {shown[-600:]}")
        print(f"{mode}: ended {p.returncode}; record {rec['reason']} {got}, last calls {calls[-4:]}; "
              f"backtrace {first_in_prog}")
for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: every crash left a complete record and ended as it would have")
sys.exit(1 if errors else 0)
