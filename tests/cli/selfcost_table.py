#!/usr/bin/env python3
"""selfcost_table.py SELFCOST_PY FIXTURE: the selfcost GPU step's statistics and table
(bench/selfcost.py, issue 33.4) against answers known by hand.

The fixture: 2 pairs, 4 rounds, blocks of 6 steps of which the first 2 (9999 us) are left out,
the other 4 all equal: a block's time is that value. Pair 1: bare 1000 us, shim 1010, 1000, 1020,
1005; pair 2: bare 2000, shim 2010, 2030, 1990, 2000. The 8 ratios sorted: 0.995 1.0 1.0 1.005
1.005 1.01 1.015 1.02: median 1.005 (+0.50 %); the sign test's 95 % interval at n = 8 is
(x1, x8) (P(Bin(8, 1/2) <= 0) = 1/256 <= 0.025 < P(<= 1) = 9/256): -0.50 to +2.00 %; pair 1's
median sqrt(1.005 x 1.01) = +0.75 %, pair 2's sqrt(1.0 x 1.005) = +0.25 %; the blocks' medians
1.500 and (1.020 + 1.990) / 2 = 1.505 ms. An interval around +0.50 % reaches the goal: not settled.
The one report's gpu_sampler part, 2 ms of CPU and 8 ms of wall in 4 s: 500 and 2000 us/s.
Also: the sign interval's order statistics at n = 20 and n < 6, the bootstrap of constant groups,
the CPUs --cpus picks (auto, a list, a bad list named in the error),
each verdict's wording, and a file that is not the figures gets a clear error naming it.
"""
import copy
import importlib.util
import json
import math
import subprocess
import sys


def load(path):
    spec = importlib.util.spec_from_file_location("selfcost", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    script, fixture = sys.argv[1:3]
    sc = load(script)
    errors = []

    def check(cond, what):
        if not cond:
            errors.append(what)

    # The sign test's interval: n = 20 -> k = 6 (P(<= 5) = 0.0207, P(<= 6) = 0.0577): (x6, x15).
    check(sc.sign_interval(list(range(1, 21))) == (6, 15), f"sign_interval 1..20: {sc.sign_interval(list(range(1, 21)))}")
    check(sc.sign_interval([5, 1, 4, 2, 3]) is None, "sign_interval of 5 values: no 95 % interval")
    check(sc.sign_interval([6, 1, 5, 2, 4, 3]) == (1, 6), "sign_interval of 6 values: (min, max)")
    # The bootstrap of groups that all hold one value: that value, both ends.
    check(sc.bootstrap_interval([[0.25] * 5, [0.25] * 7]) == (0.25, 0.25), "bootstrap of constant groups")
    lo, hi = sc.bootstrap_interval([[1, 2, 3], [4, 5, 6]])
    check(1 <= lo <= hi <= 6, f"bootstrap within the values: {lo}, {hi}")
    # The CPUs the workers are pinned to.
    check(sc.pick_cpus("auto", range(16)) == [2, 3, 4, 5] and sc.pick_cpus("auto", range(4)) == [], "pick_cpus auto")
    check(sc.pick_cpus("2-4,7", range(16)) == [2, 3, 4, 7] and sc.pick_cpus("none", range(16)) == [], "pick_cpus list")
    for bad in ("2-x", "9"):
        try:
            sc.pick_cpus(bad, range(4))
            check(False, f"pick_cpus {bad!r} accepted")
        except ValueError as e:
            check(bad in str(e), f"pick_cpus {bad!r}: {e}")
    # The verdict's wording, each way.
    check(sc.verdict(0.1, -0.2, 0.4) == "settled: shim costs +0.10 % +- 0.30 % (95 %: -0.20 to +0.40 %), below the 0.5 % goal",
          f"verdict below: {sc.verdict(0.1, -0.2, 0.4)}")
    check(sc.verdict(2.0, 1.0, 3.0).startswith("settled: shim costs +2.00 % +- 1.00 %") and
          sc.verdict(2.0, 1.0, 3.0).endswith("above the 0.5 % goal"), f"verdict above: {sc.verdict(2.0, 1.0, 3.0)}")
    check(sc.verdict(0.3, -0.1, 0.7).startswith("not settled: shim costs +0.30 %"), f"not settled: {sc.verdict(0.3, -0.1, 0.7)}")

    doc = json.load(open(fixture))
    s = sc.summarize(doc)
    close = lambda a, b: abs(a - b) < 1e-6
    check(s["units"] == 8 and s["rounds"] == 4 and s["pairs"] == 2, f"counts: {s['units']} {s['rounds']} {s['pairs']}")
    check(close(s["est_pct"], 0.5), f"estimate {s['est_pct']}")
    check(close(s["sign_pct"][0], -0.5) and close(s["sign_pct"][1], 2.0), f"sign interval {s['sign_pct']}")
    check(close(s["per_pair"][1][0], (math.sqrt(1.005 * 1.01) - 1) * 100), f"pair 1 {s['per_pair'][1]}")
    check(close(s["per_pair"][2][0], (math.sqrt(1.005) - 1) * 100), f"pair 2 {s['per_pair'][2]}")
    check(close(s["bare_ms"], 1.5) and close(s["shim_ms"], 1.505), f"blocks {s['bare_ms']} {s['shim_ms']}")
    check(-0.5 - 1e-9 <= s["lo_pct"] <= 0.5 <= s["hi_pct"] <= 2.0 + 1e-9, f"bootstrap {s['lo_pct']} {s['hi_pct']}")
    check(s["verdict"].startswith("not settled: shim costs +0.50 %"), f"verdict {s['verdict']}")
    # Every shim block 0.2 % slower than its bare one: settled, below the goal, +0.20 % +- 0.00 %.
    flat = copy.deepcopy(doc)
    for row in flat["rounds"]:
        for u in row:
            u["shim"] = [t * 1.002 for t in u["bare"]]
    f = sc.summarize(flat)
    check(f["verdict"].startswith("settled: shim costs +0.20 % +- 0.00 %") and f["verdict"].endswith("below the 0.5 % goal"),
          f"flat verdict {f['verdict']}")

    p = subprocess.run([sys.executable, script, "table", fixture], capture_output=True, text=True)
    if p.returncode != 0:
        errors.append(f"table exited {p.returncode}: {p.stderr}")
    out = p.stdout
    for e in ["**not settled: shim costs +0.50 % +- ", "the sign test's interval over all units (blind to a worker's own luck): "
              "-0.50 to +2.00 %", "| bare | 1.500 |", "| cudashim run | 1.505 |", "| 1 | 4 | +0.75 % |", "| 2 | 4 | +0.25 % |",
              "self_cost.share_of_wall_pct): 0.024 %", "the start-up work left out): 0.011 %", "2 pairs of worker processes",
              "| gpu_sampler | 500.0 | 2000.0 | 1000.0 |"]:
        check(e in out, f"missing {e!r}")
    bad = subprocess.run([sys.executable, script, "table", script], capture_output=True, text=True)
    check(bad.returncode != 0 and script in bad.stderr, f"a file that is not the figures: exit {bad.returncode}, {bad.stderr!r}")
    for e in errors:
        print("FAIL: " + e)
    if errors:
        print(out)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
