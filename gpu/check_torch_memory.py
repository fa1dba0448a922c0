#!/usr/bin/env python3
"""check_torch_memory.py RESULTS_MD CASE_DIR...: judge the report's torch_memory section on
real PyTorch against what the script itself printed (gpu/torch_fragmentation.py).

Each CASE_DIR holds the script's stdout (stdout.txt) and the shim's report. Verdicts:
  exit snapshot: the shim's numbers equal the script's last torch.cuda.memory_stats() exactly
    (nothing runs between that print and Python's exit handlers);
  oom snapshot (mode oom): present; its reserved and allocated equal the script's stats taken
    right after catching torch.OutOfMemoryError;
  ledger: process_bytes >= reserved_bytes (the process holds at least torch's segments), and the
    difference (outside_torch_bytes) is reported;
  findings: alloc.fragmentation when the row says fragmented, and alloc.torch-retries when torch
    counted retries;
  detection: with the default allocator (case names ending in -default) the split 20/12 MiB
    pattern must make alloc.fragmentation.
Appends one table row per case to RESULTS_MD; exits 1 on a FAIL.
"""
import glob
import json
import os
import sys

GiB = float(1 << 30)
MAP = {"allocated_bytes": "allocated_bytes.all.current", "allocated_peak_bytes": "allocated_bytes.all.peak",
       "reserved_bytes": "reserved_bytes.all.current", "reserved_peak_bytes": "reserved_bytes.all.peak",
       "inactive_split_bytes": "inactive_split_bytes.all.current", "segments": "segment.all.current",
       "alloc_retries": "num_alloc_retries", "ooms": "num_ooms"}


def judge(case):
    name = os.path.basename(case.rstrip("/"))
    lines = [l for l in open(os.path.join(case, "stdout.txt")).read().splitlines() if l.startswith("{")]
    reps = glob.glob(os.path.join(case, "cudashim-*.json"))
    if not lines or len(reps) != 1:
        return name, "FAIL", f"script line: {bool(lines)}, reports: {len(reps)}", None
    mine = json.loads(lines[-1])
    rep = json.load(open(reps[0]))
    tm = rep.get("torch_memory", {})
    snaps = {s["moment"]: s["devices"] for s in tm.get("snapshots", [])}
    ids = {f["id"]: f["count"] for f in rep.get("findings", [])}
    problems = []
    rows = snaps.get("exit", [])
    # every device torch used has a row equal to torch's own stats of that device
    by_dev = {int(d): v for d, v in mine.get("at_end_by_device", {"0": mine["at_end"]}).items()}
    used = sorted(d for d, v in by_dev.items() if v["reserved_bytes.all.peak"] > 0)
    if tm.get("state") != "read" or sorted(r["device"] for r in rows) != used:
        return name, "FAIL", f"state {tm.get('state')}, exit rows for devices {[r['device'] for r in rows]}, torch used {used}", None
    for r in rows:
        if r["device"] == 0:
            continue
        for k, key in MAP.items():
            if r[k] != by_dev[r["device"]][key]:
                problems.append(f"device {r['device']} exit {k} {r[k]} != torch {by_dev[r['device']][key]}")
        if r["process_bytes"] < r["reserved_bytes"]:
            problems.append(f"device {r['device']}: ledger {r['process_bytes']} < torch reserved {r['reserved_bytes']}")
    ex = [r for r in rows if r["device"] == 0][0]
    for k, key in MAP.items():
        if ex[k] != mine["at_end"][key]:
            problems.append(f"exit {k} {ex[k]} != torch {mine['at_end'][key]}")
    if ex["process_bytes"] < ex["reserved_bytes"]:
        problems.append(f"ledger {ex['process_bytes']} < torch reserved {ex['reserved_bytes']}")
    if mine["mode"] == "oom":
        oo = snaps.get("oom", [])
        if len(oo) != 1:
            problems.append("no oom snapshot")
        else:
            for k in ("allocated_bytes", "reserved_bytes", "ooms"):
                if oo[0][k] != mine["after_oom"][MAP[k]]:
                    problems.append(f"oom {k} {oo[0][k]} != torch after the catch {mine['after_oom'][MAP[k]]}")
    frag_rows = [r for rows in snaps.values() for r in rows if r["fragmented"]]
    if bool(frag_rows) != ("alloc.fragmentation" in ids):
        problems.append(f"fragmented rows {len(frag_rows)} but findings {sorted(ids)}")
    if (ex["alloc_retries"] > 0) != ("alloc.torch-retries" in ids):
        problems.append(f"retries {ex['alloc_retries']} but findings {sorted(ids)}")
    if name.endswith("-default") and "alloc.fragmentation" not in ids:
        problems.append("the default allocator's split segments made no alloc.fragmentation finding")
    oom_row = snaps.get("oom", [None])[0]
    detail = (f"exit: allocated {ex['allocated_bytes'] / GiB:.2f} (peak {ex['allocated_peak_bytes'] / GiB:.2f}) of "
              f"{ex['reserved_bytes'] / GiB:.2f} GiB reserved (peak {ex['reserved_peak_bytes'] / GiB:.2f}), "
              f"{ex['segments']} segments, inactive split {ex['inactive_split_bytes'] / GiB:.2f} GiB, "
              f"retries {ex['alloc_retries']}; ledger {ex['process_bytes'] / GiB:.3f} GiB, outside torch "
              f"{ex['outside_torch_bytes'] / (1 << 20):.1f} MiB")
    if oom_row:
        detail += (f"; oom: allocated {oom_row['allocated_bytes'] / GiB:.2f} of {oom_row['reserved_bytes'] / GiB:.2f} "
                   f"GiB reserved ({100 * oom_row['fragmentation']:.0f}% unallocated), ledger "
                   f"{oom_row['process_bytes'] / GiB:.2f} GiB; {mine.get('oom_after_gib_tensors')} GiB tensors before "
                   f"the OutOfMemoryError")
    for r in rows:
        if r["device"] != 0:
            detail += (f"; device {r['device']}: allocated {r['allocated_bytes'] / GiB:.2f} of "
                       f"{r['reserved_bytes'] / GiB:.2f} GiB reserved, inactive split "
                       f"{r['inactive_split_bytes'] / GiB:.2f} GiB, ledger {r['process_bytes'] / GiB:.3f} GiB, "
                       f"fragmented {r['fragmented']}")
    detail += f"; findings {sorted(k for k in ids if k.startswith('alloc.'))}"
    return name, "FAIL" if problems else "PASS", detail + ("; " + "; ".join(problems) if problems else ""), ex


def main():
    out, cases = sys.argv[1], sys.argv[2:]
    rows, bad = [], False
    for c in cases:
        name, verdict, detail, _ = judge(c)
        bad |= verdict == "FAIL"
        rows.append(f"| {name} | {verdict} | {detail} |")
    with open(out, "a") as f:
        f.write("| case | verdict | what the report says (GiB) |\n|---|---|---|\n" + "\n".join(rows) + "\n")
    print("\n".join(rows))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
