#!/usr/bin/env python3
"""crash.py SHIM FAKECUDA_DIR PROG: a crash leaves a complete flight record, and the
process still ends the way the original handler ends it."""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

shim, fake, prog = sys.argv[1:4]
CASES = [  # mode, extra env, how it must end, the record's reason, "signal_name" or "api"
    ("segv", {}, -signal.SIGSEGV, "signal", "SIGSEGV"),
    ("abort", {}, -signal.SIGABRT, "signal", "SIGABRT"),
    ("handler", {}, -signal.SIGSEGV, "signal", "SIGSEGV"),
    ("sticky", {"FAKECUDA_FAIL_SYNC_WITH": "700"}, 3, "cuda_error", "cuStreamSynchronize"),
    ("double", {}, -signal.SIGSEGV, "signal", "SIGSEGV"),
    ("inhook", {"FAKECUDA_SYNC_DELAY_US": "2000"}, -signal.SIGSEGV, "signal", "SIGSEGV"),
]
errors = []
for mode, extra, want_rc, reason, what in CASES:
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
        print(f"{mode}: ended {p.returncode}; record {rec['reason']} {got}, last calls {calls[-4:]}")
for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: every crash left a complete record and ended as it would have")
sys.exit(1 if errors else 0)
