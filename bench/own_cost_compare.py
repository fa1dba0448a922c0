#!/usr/bin/env python3
"""own_cost_compare.py: cudashim's own threads' CPU time, build against build, in one run (issue 33.4).

Each build's preload library (LD_PRELOAD, CUDASHIM_OUT set, nothing else) runs the same
host-bound loop (bench/selfcost.py's child: a batch sorted a step, an async copy and 12 launches
through the runtime test double) for SECONDS, in ROUNDS rounds, the builds' order rotating by
round. From each process's report (self_cost, docs/report-schema.md): its own threads' CPU time per
second of wall time (every build since self_cost has it), its hooks' estimate, and, where the build
has them, self_cost.steady and the flush thread's parts (self_cost.parts) per second. The table
gives each build's median over its rounds.

  own_cost_compare.py --lib NAME=LIBCUDASHIM.so [--lib ...] --cpu FAKECUDA_DIR [--rounds 3]
                      [--seconds 20] [--prep 300000] [--out TABLE.md]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def one(lib, fake, cudart, seconds, prep):
    with tempfile.TemporaryDirectory() as out:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}
        env.update(LD_PRELOAD=lib, CUDASHIM_OUT=out, LD_LIBRARY_PATH=fake)
        cmd = [sys.executable, os.path.join(HERE, "selfcost.py"), "child", "--prep", str(prep), "--warm", str(seconds),
               "--cpu", cudart]
        p = subprocess.run(cmd, env=env, input="quit\n", capture_output=True, text=True, timeout=seconds + 120)
        if p.returncode != 0:
            raise RuntimeError(f"{lib}: exit {p.returncode}: {p.stderr[-1500:]}")
        reps = [f for f in glob.glob(os.path.join(out, "**", "cudashim-*.json"), recursive=True) if not f.endswith("-crash.json")]
        if not reps:
            raise RuntimeError(f"{lib}: no report in {out}: {p.stderr[-800:]}")
        return json.load(open(reps[0]))["self_cost"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", action="append", required=True, metavar="NAME=PATH")
    ap.add_argument("--cpu", required=True, metavar="FAKECUDA_DIR")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--prep", type=int, default=300000)
    ap.add_argument("--out")
    a = ap.parse_args()
    libs = []
    for spec in a.lib:
        name, _, path = spec.partition("=")
        if not path or not os.path.isfile(path):
            raise SystemExit(f"own_cost_compare.py: --lib {spec}: not NAME=PATH of a file")
        libs.append((name, os.path.abspath(path)))
    cudart = sorted(glob.glob(os.path.join(a.cpu, "libcudart.so*")))
    if not cudart:
        raise SystemExit(f"own_cost_compare.py: --cpu {a.cpu}: no libcudart.so* there")
    runs = {name: [] for name, _ in libs}
    t0 = time.time()
    for r in range(a.rounds):
        for name, path in libs[r % len(libs):] + libs[:r % len(libs)]:
            sc = one(path, os.path.abspath(a.cpu), cudart[0], a.seconds, a.prep)
            runs[name].append(sc)
            print(f"round {r + 1} {name}: threads {sc['threads_cpu_ns'] / 1e6:.2f} ms in {sc['wall_ns'] / 1e9:.1f} s", flush=True)
    med = statistics.median
    parts = sorted({p for name in runs for sc in runs[name] for p in (sc.get("parts") or {})})
    lines = ["# cudashim's own threads' CPU time, build against build (the runtime test double)", "",
             f"- command: `bench/own_cost_compare.py {' '.join(sys.argv[1:])}`",
             f"- {a.rounds} rounds, the builds' order rotating; one process a build a round: bench/selfcost.py's child loop "
             f"for {a.seconds:g} s (batch preparation {a.prep} values sorted a step, an async copy and 12 launches); "
             f"{time.time() - t0:.0f} s in all; medians over the rounds", "",
             "| build | own threads us/s of wall | hooks' estimate us/s | share of wall % | steady share % | flush rounds |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, _ in libs:
        scs = runs[name]
        rate = med(sc["threads_cpu_ns"] / sc["wall_ns"] * 1e6 for sc in scs)
        hooks = med(sc["hooks_ns_estimate"] / sc["wall_ns"] * 1e6 for sc in scs)
        share = med(sc["share_of_wall_pct"] for sc in scs)
        steady = [sc["steady"] for sc in scs if sc.get("steady")]
        st = f"{med(s['share_of_wall_pct'] for s in steady):.3f}" if steady else "-"
        rounds = f"{med(s['rounds'] for s in steady):.0f}" if steady else "-"
        lines.append(f"| {name} | {rate:.1f} | {hooks:.1f} | {share:.3f} | {st} | {rounds} |")
    if parts:
        lines += ["", "The flush thread's parts (self_cost.parts), us of CPU per second of wall (median over rounds; "
                      "- where the build has no such part):", "",
                  "| build | " + " | ".join(parts) + " |", "|---|" + "---:|" * len(parts)]
        for name, _ in libs:
            cells = []
            for p in parts:
                xs = [sc["parts"][p]["cpu_ns"] / sc["wall_ns"] * 1e6 for sc in runs[name] if p in (sc.get("parts") or {})]
                cells.append(f"{med(xs):.1f}" if xs else "-")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
