#!/usr/bin/env python3
"""price_bench.py: are the findings' prices right? (issue 33, item 3; a benchmark, not a test)

For each habit program of the corpus (habit_*.py, and the table HABITS below): one process under
`cudashim run` that runs the program's fixed and planted forms in alternating timed blocks
(`--alternate R`, harness.BlockClock: same process, same warm caches, fixed first), and one clean
process under the shim, and the planted form alone under the shim, as a user runs it. From that
last one: the report's predicted saving per step of the finding at the PLANTED line
(findings[].predicted_saving_per_step_ns; its GPU idle is the planted program's own, not a mix of
both forms' blocks); from the first: the measured difference, the
median over the R/2 pairs of (planted block's step time - the fixed block's before it). Noise: the
largest distance of a pair's difference from that median. Verdict: `within` when the prediction is
within +-25 % of the measured difference, `off` when not, `noise` when the measured difference is
not above the noise (no verdict possible). Recall: the expected id is a warning at the PLANTED
line. Clean quiet: the clean run's reports hold no warning.

usage: price_bench.py --cli PATH [--rounds 8] [--steps 100] [--only habit_item,...] [--out DIR]
       [--budget-s 230]
       price_bench.py --table FILE.json   (the markdown table again, from a saved result)
Writes DIR/price.md (the table), DIR/price.json, and each run's reports under DIR/runs/.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check  # noqa: E402  (planted_line, read_reports, classify, resolve_cli, run_one)

HABITS = [
    dict(file="habit_item.py", habit="`loss.item()`", expect="sync.scalar-readback"),
    dict(file="habit_print.py", habit='`print(f"{loss}")`', expect="sync.scalar-readback"),
    dict(file="habit_if_any.py", habit="`if t.any():`", expect="sync.scalar-readback"),
    dict(file="habit_tqdm.py", habit="`bar.set_postfix(loss=loss.item())`", expect="sync.scalar-readback"),
    dict(file="habit_synchronize.py", habit="`torch.cuda.synchronize()`", expect="sync.explicit-in-loop"),
    dict(file="habit_empty_cache.py", habit="`torch.cuda.empty_cache()`", expect="alloc.churn-after-warmup"),
    dict(file="habit_pageable.py", habit="pageable `non_blocking` copy", expect="copy.async-from-pageable"),
    dict(file="habit_asnumpy.py", habit="`cupy.asnumpy(loss)`", expect="sync.scalar-readback"),
    dict(file="habit_compiled_item.py", habit="`.item()` in a compiled function", expect="sync.scalar-readback"),
    dict(file="habit_library.py", habit="read-back in a site-packages helper", expect="sync.scalar-readback"),
]
TOLERANCE = 0.25


# ---------------------------------------------------------------------------- the arithmetic

def measured(blocks):
    """(measured difference per step in ms, noise in ms, pairs) from harness.BlockClock's blocks:
    each planted block against the fixed block before it."""
    diffs = []
    prev_fixed = None
    for b in blocks:
        per_step_ms = 1000.0 * b["seconds"] / max(1, b["steps"])
        if not b["planted"]:
            prev_fixed = per_step_ms
        elif prev_fixed is not None:
            diffs.append(per_step_ms - prev_fixed)
            prev_fixed = None
    if not diffs:
        return None, None, 0
    med = statistics.median(diffs)
    noise = max(abs(d - med) for d in diffs) if len(diffs) > 1 else abs(med)
    return med, noise, len(diffs)


def verdict(predicted_ms, measured_ms, noise_ms):
    """within / off / noise (the measured difference is not above the noise) / '?' (no numbers)."""
    if predicted_ms is None or measured_ms is None:
        return "?"
    if measured_ms <= noise_ms or measured_ms <= 0:
        return "noise"
    return "within" if abs(predicted_ms - measured_ms) <= TOLERANCE * measured_ms else "off"


def planted_finding(reports, prog, line, expect):
    """The finding with id `expect` that has a site at prog:line, over all reports, or None."""
    prog_real = os.path.realpath(prog)
    for r in reports:
        for f in r.get("findings") or []:
            if f.get("id") != expect:
                continue
            for s in f.get("sites") or []:
                m = check.where_match(str(s.get("where", "")))
                if m and int(m["line"]) == line and os.path.realpath(m["file"]) == prog_real:
                    return f
    return None


def nvml_idle_ms(reports, step_ms):
    """NVML's GPU idle per step over the steady state (the least idle device of the planted run's
    reports), the price model's third bound (docs/findings.md), or None when not measured."""
    shares = [d["steady"]["idle"] for r in reports for d in ((r.get("gpu_time") or {}).get("devices") or [])
              if isinstance(d.get("steady"), dict) and d["steady"].get("samples") and d["steady"].get("idle") is not None]
    return min(shares) * step_ms if shares and step_ms is not None else None


def row_of(h, prog, line, planted_reports, clean_reports, blocks):
    """One table row (a dict) from a habit's reports and block times."""
    f = planted_finding(planted_reports, prog, line, h["expect"])
    predicted = f.get("predicted_saving_per_step_ns") / 1e6 if f and f.get("predicted_saving_per_step_ns") is not None else None
    meas, noise, pairs = measured(blocks)
    warnings, _, _ = check.classify(clean_reports, prog, line)
    return dict(habit=h["habit"], file=h["file"], expect=h["expect"],
                found=bool(f and f.get("severity") in ("warning", "error")),
                severity=f.get("severity") if f else None, also=(f or {}).get("also") or [],
                blocked_ms=(f["blocked_per_step_ns"] / 1e6) if f else None,
                idle_ms=(f["gpu_idle_after_per_step_ns"] / 1e6) if f else None,
                step_ms=(f["step_ns"] / 1e6) if f and f.get("step_ns") else None,
                nvml_idle_ms=nvml_idle_ms(planted_reports, (f["step_ns"] / 1e6) if f and f.get("step_ns") else None),
                predicted_ms=predicted, measured_ms=meas, noise_ms=noise, pairs=pairs,
                verdict=verdict(predicted, meas, noise), clean_warnings=len(warnings),
                clean_quiet=not warnings, error=None)


def fmt_ms(x):
    return "-" if x is None else f"{x:.3f}"


def table(doc):
    """The markdown table of a result document."""
    rows = doc["rows"]
    out = [f"Command: `{doc.get('command', '?')}`  ", f"cudashim: {doc.get('cli_version', '?')}; rounds {doc.get('rounds')}, "
           f"steps per block {doc.get('steps')}; tolerance +-{int(TOLERANCE * 100)} %", "",
           "| habit | expected | found (severity) | blocked ms/step | GPU idle after ms/step | predicted saving ms/step "
           "| measured ms/step | noise ms | verdict | clean quiet | step ms | NVML GPU idle ms/step |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("error"):
            out.append(f"| {r['habit']} | {r['expect']} | ERROR: {r['error']} | | | | | | | | | |")
            continue
        found = ("yes" if r["found"] else "no") + f" ({r['severity'] or 'none'})"
        if r["also"]:
            found += " also " + ", ".join(r["also"])
        out.append(f"| {r['habit']} | {r['expect']} | {found} | {fmt_ms(r['blocked_ms'])} | {fmt_ms(r['idle_ms'])} | "
                   f"{fmt_ms(r['predicted_ms'])} | {fmt_ms(r['measured_ms'])} | {fmt_ms(r['noise_ms'])} | {r['verdict']} | "
                   f"{'yes' if r['clean_quiet'] else 'no (%d)' % r['clean_warnings']} | {fmt_ms(r.get('step_ms'))} | "
                   f"{fmt_ms(r.get('nvml_idle_ms'))} |")
    ok = [r for r in rows if not r.get("error")]
    judged = [r for r in ok if r["verdict"] in ("within", "off")]
    out += ["", f"Recall: {sum(r['found'] for r in ok)}/{len(rows)}; clean quiet: {sum(r['clean_quiet'] for r in ok)}/{len(rows)}; "
            f"within +-{int(TOLERANCE * 100)} %: {sum(r['verdict'] == 'within' for r in judged)}/{len(judged)} rows above the noise"]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- running

def run_habit(cli, h, args, out):
    prog = os.path.join(HERE, h["file"])
    line, why = check.planted_line(prog)
    if line is None:
        return dict(habit=h["habit"], expect=h["expect"], error=why)
    env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    name = h["file"][:-3]
    runs = {}
    # The prediction comes from the planted program run alone, as a user runs it (its report: the
    # GPU's idle is its own, not a mix of fixed and planted blocks); the measurement from the
    # alternating blocks of one process; clean quiet from the clean form.
    for form, extra in (("alternate", ["--alternate", str(args.rounds)]), ("planted", ["--planted"]), ("clean", [])):
        rundir = os.path.join(out, "runs", name, form)
        os.makedirs(rundir, exist_ok=True)
        timing = os.path.join(rundir, "timing.json")
        env_run = dict(env, CORPUS_TIMING=timing)
        # The planted run alone is longer: NVML's steady-state idle (the price's GPU bound) needs a
        # loop of a second or more, as a user's job has; 100 steps of 5 ms do not give one.
        steps = args.planted_steps if form == "planted" else args.steps
        cmd = [cli, "run", "--out", rundir, "--", sys.executable, prog, "--steps", str(steps)] + extra
        rc, wall, err = check.run_one(cmd, rundir, args.timeout, env_run)
        if rc != 0:
            return dict(habit=h["habit"], expect=h["expect"],
                        error=f"{form} run: exit {rc}: {check.last_line(err)}")
        reports, _, bad = check.read_reports(rundir)
        blocks = []
        if os.path.exists(timing):
            with open(timing, encoding="utf-8") as f:
                blocks = json.load(f).get("blocks", [])
        runs[form] = (reports, blocks)
    return row_of(h, prog, line, runs["planted"][0], runs["clean"][0], runs["alternate"][1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", help="the cudashim executable, a wheel, a pip --target folder or a build tree")
    ap.add_argument("--rounds", type=int, default=8, help="timed blocks, fixed and planted in turn (<= 8)")
    ap.add_argument("--steps", type=int, default=100, help="steps per block")
    ap.add_argument("--planted-steps", type=int, default=400,
                    help="steps of the planted run alone, whose report gives the prediction (NVML needs >= 1 s of loop)")
    ap.add_argument("--only", default="", help="habit files (without .py), comma-separated")
    ap.add_argument("--out", default="price-out")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per process (a cold torch.compile takes 30 s or more)")
    ap.add_argument("--budget-s", type=int, default=230, help="skip the habits that would start past this")
    ap.add_argument("--table", help="print the table of a saved price.json and leave")
    a = ap.parse_args()
    if a.table:
        with open(a.table, encoding="utf-8") as f:
            sys.stdout.write(table(json.load(f)))
        return 0
    if not a.cli:
        ap.error("--cli PATH is needed (or --table FILE)")
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    cli, why = check.resolve_cli(a.cli, os.path.join(a.out, "scratch"))
    if cli is None:
        print(f"price_bench: --cli {a.cli}: {why}", file=sys.stderr)
        return 2
    only = {x.strip() for x in a.only.split(",") if x.strip()}
    t0 = time.monotonic()
    doc = dict(command=" ".join(sys.argv), cli_version=check.cli_version(cli), rounds=a.rounds, steps=a.steps, rows=[])
    for h in HABITS:
        if only and h["file"][:-3] not in only:
            continue
        if time.monotonic() - t0 > a.budget_s:
            doc["rows"].append(dict(habit=h["habit"], expect=h["expect"], error="skipped: past --budget-s"))
            continue
        row = run_habit(cli, h, a, a.out)
        doc["rows"].append(row)
        print(f"[{time.monotonic() - t0:.0f}s] {h['file']}: {row.get('verdict', row.get('error'))}", flush=True)
    with open(os.path.join(a.out, "price.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    text = table(doc)
    with open(os.path.join(a.out, "price.md"), "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
