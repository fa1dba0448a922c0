#!/usr/bin/env python3
"""run_fuzz.py --bin FUZZER --seeds DIR --runs N --work DIR: one bounded libFuzzer run.

The fuzzer starts from the committed seeds (read only) and a fresh working corpus under
--work (where it adds what it finds), runs exactly N inputs with a fixed seed (set
CUDASHIM_FUZZ_SEED to explore elsewhere) and fails on the first crash, sanitizer report,
broken contract, leak or input slower than 10 s, leaving the input under --work/artifacts.
Exit 77 (CTest: skipped) when the fuzzer was not built: no clang with libFuzzer.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--max-len", type=int, default=0)
    a = ap.parse_args()
    name = os.path.basename(a.bin)
    if not os.access(a.bin, os.X_OK):
        print(f"skipped: {a.bin} was not built (needs clang with libFuzzer: clang-14 and libclang-rt-14-dev)")
        return 77
    seeds = sorted(os.listdir(a.seeds))
    if not seeds:
        print(f"FAIL: no seed in {a.seeds}")
        return 1
    corpus = os.path.join(a.work, "corpus")
    artifacts = os.path.join(a.work, "artifacts")
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(corpus)
    os.makedirs(artifacts)
    # Inputs that once broke a target (tests/fuzz/found/<target>-*) are replayed first.
    found = os.path.join(os.path.dirname(os.path.abspath(__file__)), "found")
    name_prefix = os.path.basename(a.bin).replace("fuzz_", "") + "-"
    replay = [os.path.join(found, f) for f in sorted(os.listdir(found))] if os.path.isdir(found) else []
    replay = [f for f in replay if os.path.basename(f).startswith(name_prefix)]
    if replay:
        r = subprocess.run([a.bin, *replay], capture_output=True, text=True, errors="replace")
        if r.returncode != 0:
            print(f"FAIL: a known input broke {a.bin} again:\n{r.stderr[-3000:]}")
            return 1
        print(f"ok: {len(replay)} known input(s) replayed: {[os.path.basename(f) for f in replay]}")
    cmd = [a.bin, corpus, a.seeds, f"-runs={a.runs}", f"-seed={os.environ.get('CUDASHIM_FUZZ_SEED', '1')}",
           "-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1", f"-artifact_prefix={artifacts}/"]
    if a.max_len:
        cmd.append(f"-max_len={a.max_len}")
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    took = time.monotonic() - t0
    log = p.stdout + p.stderr
    done = re.search(r"Done (\d+) runs in (\d+) second", log)
    crashes = sorted(os.listdir(artifacts))
    if p.returncode != 0 or crashes or not done:
        sys.stdout.write(log[-8000:])
        print(f"FAIL: {name} exited {p.returncode} after {took:.0f} s; inputs kept: "
              f"{[os.path.join(artifacts, c) for c in crashes]}")
        if crashes:
            print(f"reproduce: {a.bin} {os.path.join(artifacts, crashes[0])}")
        return 1
    runs = int(done.group(1))
    grown = len(os.listdir(corpus))
    print(f"ok: {name}: {runs} executions in {took:.1f} s from {len(seeds)} seeds "
          f"({grown} new inputs kept in {corpus}), no crash, no sanitizer report, no broken contract")
    return 0 if runs >= a.runs else 1


if __name__ == "__main__":
    sys.exit(main())
