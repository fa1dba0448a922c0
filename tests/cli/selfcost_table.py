#!/usr/bin/env python3
"""selfcost_table.py SELFCOST_PY FIXTURE: the selfcost GPU step's table (bench/selfcost.py, issue 33.4)
computed from a fixture of eight rounds whose figures are known by hand: each side's median and
min-max, the median of the rounds' ratios and their spread, the reports' own share; and a file
that is not the figures gets a clear error naming it.
"""
import subprocess
import sys


def main():
    script, fixture = sys.argv[1:3]
    errors = []
    p = subprocess.run([sys.executable, script, "table", fixture], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"FAIL: table exited {p.returncode}: {p.stderr}")
        return 1
    out = p.stdout
    # bare 9.8..10.3, median of 8 = (10.0 + 10.0) / 2; shim 9.9..10.4, median (10.05 + 10.1) / 2
    # ratios sorted: 0.9901, 1.0, 1.005, 1.0097, 1.01, 1.01, 1.0101, 1.0102 -> median (1.0097 + 1.01) / 2 = 1.00985
    expect = ["| bare | 10.000 | 9.800-10.300 |", "| cudashim run | 10.075 | 9.900-10.400 |",
              "| ratio shim/bare, per round | 1.0099 | 0.9901-1.0102 |",
              "(the reports' self_cost.share_of_wall_pct): 0.024 % (max 0.027 %)",
              "measured median ratio +0.99 % (spread -0.99 to +1.02 %)", "| 2 | shim-bare | 10.200 | 10.200 | 1.0000 | 0.021 |"]
    for e in expect:
        if e not in out:
            errors.append(f"missing {e!r}")
    bad = subprocess.run([sys.executable, script, "table", script], capture_output=True, text=True)
    if bad.returncode == 0 or script not in bad.stderr:
        errors.append(f"a file that is not the figures: exit {bad.returncode}, {bad.stderr!r}")
    for e in errors:
        print("FAIL: " + e)
    if errors:
        print(out)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
