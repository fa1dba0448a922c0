#!/usr/bin/env python3
"""price_bench_test.py GPU_REALWORLD_DIR: the arithmetic of gpu/realworld/price_bench.py on
fabricated block times and report JSON (a unit test of the table code only: the proof that the
prices are right is the H200 run, gpu/run_after_merge.sh price)."""
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import price_bench as pb  # noqa: E402

fails = []


def expect(cond, what):
    if not cond:
        fails.append(what)


def blocks(pairs, steps=100):
    """Alternating fixed/planted blocks with the given per-step milliseconds."""
    out = []
    for fixed_ms, planted_ms in pairs:
        out.append(dict(planted=False, steps=steps, seconds=fixed_ms * steps / 1000.0))
        out.append(dict(planted=True, steps=steps, seconds=planted_ms * steps / 1000.0))
    return out


# Differences 1.0, 1.2, 0.9, 1.1 ms: median 1.05, noise max |d - 1.05| = 0.15.
m, noise, pairs = pb.measured(blocks([(2.0, 3.0), (2.1, 3.3), (2.0, 2.9), (1.9, 3.0)]))
expect(pairs == 4, f"pairs {pairs}")
expect(abs(m - 1.05) < 1e-9, f"median {m}")
expect(abs(noise - 0.15) < 1e-9, f"noise {noise}")
# A planted block with no fixed block before it is not paired.
m2, _, pairs2 = pb.measured([dict(planted=True, steps=10, seconds=0.03)] + blocks([(2.0, 3.0)]))
expect(pairs2 == 1 and abs(m2 - 1.0) < 1e-9, f"unpaired planted block counted: {m2}, {pairs2}")
expect(pb.measured([]) == (None, None, 0), "no blocks")

expect(pb.verdict(1.0, 1.05, 0.15) == "within", "1.0 against 1.05")
expect(pb.verdict(1.4, 1.05, 0.15) == "off", "1.4 against 1.05 (33 % off)")
expect(pb.verdict(0.8, 1.05, 0.15) == "within", "0.8 against 1.05 (24 % off)")
expect(pb.verdict(0.7, 1.05, 0.15) == "off", "0.7 against 1.05")
expect(pb.verdict(1.0, 0.1, 0.15) == "noise", "measured below the noise")
expect(pb.verdict(None, 1.0, 0.1) == "?", "no prediction")

with tempfile.TemporaryDirectory() as d:
    prog = os.path.join(d, "habit_x.py")
    open(prog, "w").write("x\nloss.item()  # PLANTED\n")
    report = {"findings": [
        {"id": "sync.scalar-readback", "severity": "warning", "blocked_per_step_ns": 1900000, "step_ns": 4000000,
         "gpu_idle_after_per_step_ns": 1000000, "predicted_saving_per_step_ns": 1000000, "also": [],
         "sites": [{"where": f"{prog}:2 (step)", "count": 100}]},
        {"id": "sync.explicit-in-loop", "severity": "warning", "blocked_per_step_ns": 5,
         "gpu_idle_after_per_step_ns": 0, "predicted_saving_per_step_ns": 0,
         "sites": [{"where": f"{prog}:1 (step)", "count": 100}]}],
        "gpu_time": {"devices": [{"steady": {"samples": 30, "idle": 0.25}}, {"steady": None}]}}
    clean = {"findings": [{"id": "sync.spin-wait", "severity": "info", "sites": []}]}
    h = dict(file="habit_x.py", habit="x", expect="sync.scalar-readback")
    row = pb.row_of(h, prog, 2, [report], [clean], blocks([(2.0, 3.0), (2.0, 3.05)]))
    expect(row["found"] and row["severity"] == "warning", f"found {row}")
    expect(abs(row["predicted_ms"] - 1.0) < 1e-9, f"predicted {row['predicted_ms']}")
    expect(row["verdict"] == "within", f"verdict {row['verdict']}")
    expect(row["clean_quiet"], "an info in the clean run is quiet")
    # The step and NVML's idle per step beside it (the model's bounds): 4 ms, 25 % idle = 1 ms.
    expect(abs(row["step_ms"] - 4.0) < 1e-9 and abs(row["nvml_idle_ms"] - 1.0) < 1e-9, f"step/idle {row}")
    # The wrong line, or a warning in the clean run.
    row = pb.row_of(dict(h, expect="sync.explicit-in-loop"), prog, 2, [report], [report], blocks([(2.0, 3.0)]))
    expect(not row["found"] and row["predicted_ms"] is None, "a finding at another line is not the planted one")
    expect(not row["clean_quiet"] and row["clean_warnings"] == 2, f"clean warnings {row['clean_warnings']}")
    text = pb.table(dict(command="price_bench.py --cli X", rounds=4, steps=100, rows=[
        pb.row_of(h, prog, 2, [report], [clean], blocks([(2.0, 3.0), (2.0, 3.05)])),
        dict(habit="y", expect="sync.scalar-readback", error="planted run: exit 1: boom")]))
    expect("| x | sync.scalar-readback | yes (warning) | 1.900 | 1.000 | 1.000 | 1.025 |" in text, text)
    expect("ERROR: planted run: exit 1: boom" in text, "an error row")
    expect("Recall: 1/2; clean quiet: 1/2; within +-25 %: 1/1 rows above the noise" in text, text)

if fails:
    print("FAIL:\n  " + "\n  ".join(fails))
    sys.exit(1)
print("ok: price_bench's arithmetic")
