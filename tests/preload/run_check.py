#!/usr/bin/env python3
"""run_check.py: run a program with libcudashim.so preloaded and check its report.

The program prints one JSON line on stdout with what it did:
  {"expect_calls": {"<exact ABI>": N, ...},
   "expect_device0": {"live_bytes": B, "peak_bytes": P}}      (optional)
The harness runs it with LD_PRELOAD=<shim> and CUDASHIM_OUT=<fresh folder>, loads
the one report the process wrote, and fails (exit 1, naming every difference) when
 - an expected ABI's api.<ABI>.calls differs from the program's own count;
 - any other hooked, non-resolution ABI was counted (a call counted twice, or under
   the wrong ABI: cuStreamSynchronize instead of cuStreamSynchronize_ptsz);
 - device 0's live/peak bytes differ;
 - an --event NAME>=N / NAME=N condition on the report's interposition counters fails.
Usage: run_check.py --shim LIB [--env K=V]... [--event COND]... [--allow ABI]... -- CMD...
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

RESOLUTION = {"cuGetProcAddress", "cuGetProcAddress_v2", "cuDriverGetVersion"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shim", required=True)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--event", action="append", default=[])
    ap.add_argument("--allow", action="append", default=[], help="ABI that may be counted without expectation")
    ap.add_argument("--cli", help="cudashim CLI: its hook names go to CUDASHIM_TEST_HOOK_NAMES (ground truth)")
    ap.add_argument("--schema", help="docs/report-schema.md: every report must match it")
    ap.add_argument("--reports", type=int, default=1, help="how many report files the run must leave")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    errors = []
    with tempfile.TemporaryDirectory(prefix="cudashim-test-") as out:
        env = dict(os.environ)
        for kv in a.env:
            k, _, v = kv.partition("=")
            env[k] = v
        env["LD_PRELOAD"] = a.shim + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
        env["CUDASHIM_OUT"] = out
        if a.cli:
            names = subprocess.run([a.cli, "hooks", "--names"], check=True, capture_output=True, text=True).stdout
            names_file = os.path.join(out, "hook-names.txt")
            with open(names_file, "w") as f:
                f.write(names)
            env["CUDASHIM_TEST_HOOK_NAMES"] = names_file
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stdout, stderr = proc.communicate(timeout=600)
        p = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
        sys.stderr.write(p.stderr)
        if p.returncode != 0:
            print(f"FAIL: {cmd} exited {p.returncode}\n{p.stdout}")
            return 1
        lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
        if not lines:
            print(f"FAIL: {cmd} printed no expectation line; stdout was:\n{p.stdout}")
            return 1
        expect = json.loads(lines[-1])
        reports = sorted(glob.glob(os.path.join(out, "cudashim-*.json")))
        if len(reports) != a.reports:
            print(f"FAIL: expected {a.reports} report file(s) in CUDASHIM_OUT, found {reports}")
            return 1
        if a.schema:
            v = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "hygiene",
                                "check_report_schema.py"), a.schema, *reports], capture_output=True, text=True)
            if v.returncode != 0:
                print(v.stdout)
                return 1
        # The program's own report is the one with its pid (forked children have others).
        rep = None
        for path in reports:
            with open(path) as f:
                r = json.load(f)
            if r["process"]["pid"] == proc.pid:
                rep = r
        if rep is None:
            print(f"FAIL: no report has the program's pid {proc.pid}: {reports[:5]}")
            return 1
        if rep["process"]["argv"][1:] != cmd[1:]:
            errors.append(f"process.argv = {rep['process']['argv']}, expected {cmd}")
        if rep.get("schema") != "cudashim.report/1":
            errors.append(f"schema is {rep.get('schema')!r}")
        api = rep.get("api", {})
        exp_calls = expect.get("expect_calls", {})
        for abi, n in sorted(exp_calls.items()):
            got = api.get(abi, {}).get("calls", 0)
            if got != n:
                errors.append(f"api.{abi}.calls = {got}, the program made {n}")
        for abi, row in sorted(api.items()):
            if abi in exp_calls or abi in RESOLUTION or abi in a.allow:
                continue
            errors.append(f"api.{abi}.calls = {row.get('calls')} but the program never called {abi}")
        dev = expect.get("expect_device0")
        if dev:
            rows = [d for d in rep["memory"]["devices"] if d["device"] == 0]
            if not rows:
                errors.append("memory.devices has no device 0")
            else:
                for k, v in dev.items():
                    if rows[0].get(k) != v:
                        errors.append(f"memory.devices[0].{k} = {rows[0].get(k)}, expected {v}")
        leak = expect.get("expect_leak")
        if leak:
            dev = [g for g in rep["leaks"]["by_site"] if g["kind"] == "device"]
            if not dev or dev[0]["bytes"] != leak["bytes"] or leak["where"] not in (dev[0]["where"] or "") or \
                    ("api" in leak and dev[0]["api"] != leak["api"]):
                errors.append(f"leaks: expected {leak} as the largest device group, got {dev[:2]}")
        ev = rep.get("interposition", {})
        for cond in a.event:
            if ">=" in cond:
                name, val = cond.split(">=")
                ok = ev.get(name, 0) >= int(val)
            else:
                name, val = cond.split("=")
                ok = ev.get(name, 0) == int(val)
            if not ok:
                errors.append(f"interposition.{name} = {ev.get(name)}, wanted {cond}")
        if errors:
            print("FAIL: " + " ".join(cmd))
            for e in errors:
                print("  - " + e)
            print(json.dumps(rep, indent=1)[:4000])
            return 1
        print(f"ok: {len(exp_calls)} ABIs counted exactly ({sum(exp_calls.values())} calls) for {' '.join(cmd)}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
