#!/usr/bin/env python3
"""timeline.py SHIM FAKECUDA_DIR SYNC_RULES STRESS: the event stream and the trace.

1. sync_rules explicit_sync (40 device syncs of 300 us each in the test double):
   the .ndjson stream starts with "start" and ends with "exit", every line is JSON;
   the .trace is Chrome JSON with a slice per sync (>= 300 us, named by API, with
   its call site), a device-memory counter track and the finding as an instant event.
2. A process killed with SIGKILL mid-run leaves a readable stream: complete JSON
   lines, snapshots at least once a second up to the kill.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

shim, fake, sync_rules, stress = sys.argv[1:5]
errors = []
env0 = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_LOG_LEVEL="error")
with tempfile.TemporaryDirectory() as out:
    env = dict(env0, CUDASHIM_OUT=out, FAKECUDA_SYNC_DELAY_US="300")
    p = subprocess.run([sync_rules, "explicit_sync"], env=env, capture_output=True, text=True, timeout=60)
    nd = glob.glob(os.path.join(out, "*.ndjson"))
    tr = glob.glob(os.path.join(out, "*.trace"))
    if p.returncode != 0 or len(nd) != 1 or len(tr) != 1:
        errors.append(f"run: exit {p.returncode}, ndjson {nd}, trace {tr}")
    else:
        lines = [json.loads(l) for l in open(nd[0])]
        types = [l["type"] for l in lines]
        if types[0] != "start" or types[-1] != "exit" or "finding" not in types:
            errors.append(f"stream types {types}")
        t = json.load(open(tr[0]))["traceEvents"]
        syncs = [e for e in t if e.get("ph") == "X" and e["name"] == "cudaDeviceSynchronize"]
        if len(syncs) < 40 or min(e["dur"] for e in syncs) < 300 or not all(e["args"]["where"] for e in syncs):
            errors.append(f"trace: {len(syncs)} sync slices, min dur {min((e['dur'] for e in syncs), default=0)} us")
        if not [e for e in t if e.get("ph") == "C" and "memory" in e["name"]]:
            errors.append("trace: no memory counter track")
        if not [e for e in t if e.get("ph") == "i" and e["name"] == "sync.explicit-in-loop"]:
            errors.append("trace: no instant event for the finding")
        print(f"stream: {len(lines)} lines {sorted(set(types))}; trace: {len(t)} events, {len(syncs)} sync slices")

with tempfile.TemporaryDirectory() as out:
    env = dict(env0, CUDASHIM_OUT=out, CUDASHIM_TEST_HOOK_NAMES="/dev/null")
    p = subprocess.Popen([stress, "2", "4000000000"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2.5)
    p.send_signal(signal.SIGKILL)
    p.wait()
    nd = glob.glob(os.path.join(out, "*.ndjson"))
    if len(nd) != 1:
        errors.append(f"SIGKILL: {nd}")
    else:
        raw = open(nd[0]).read()
        lines = [json.loads(l) for l in raw.splitlines()]  # raises if a line is cut
        snaps = [l for l in lines if l["type"] == "snapshot"]
        if not raw.endswith("\n") or len(snaps) < 2 or snaps[-1]["calls"] == 0:
            errors.append(f"SIGKILL: {len(snaps)} snapshots, last {snaps[-1:]}")
        gap = 2.5e9 - snaps[-1]["t_ns"]
        if gap > 1.3e9:
            errors.append(f"SIGKILL: the last snapshot is {gap / 1e9:.2f} s before the kill")
        print(f"SIGKILL after 2.5 s: {len(snaps)} snapshots, last at {snaps[-1]['t_ns'] / 1e9:.2f} s with {snaps[-1]['calls']} calls")
for e in errors:
    print("FAIL: " + e)
print("ok: stream and trace complete; a killed process lost at most its last second" if not errors else "")
sys.exit(1 if errors else 0)
