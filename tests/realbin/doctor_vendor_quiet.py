#!/usr/bin/env python3
"""What NVIDIA's own binaries carry for other GPUs is no finding of the user's (issue 21): cuSPARSE
12.2.0.103 (CUDA 12.3, NVIDIA's wheel unpacked by scripts/setup.sh into .deps/realbin/cusparse122)
has no SASS for sm_120, only compute_90 PTX. `cudashim doctor --sm 120` on that site-packages must
still exit 0, keep the fatbin.no-sass finding in --json as vendor_internal info, leave it out of
the text unless --verbose, and list the SASS architectures in numeric order.
Before this change it was a warning and exit 1. Exit 77 (skipped) when the wheel is not there.
"""
import argparse
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--deps", required=True, help=".deps/realbin")
    a = ap.parse_args()
    site = os.path.join(a.deps, "cusparse122")
    if not os.path.exists(os.path.join(site, "nvidia/cusparse/lib/libcusparse.so.12")):
        print(f"skip: {site} missing (run scripts/setup.sh --tests)")
        return 77
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    env["NO_COLOR"] = "1"
    base = [a.cli, "doctor", "--sm", "120", "--driver-version-file", os.devnull, "--mountinfo", os.devnull]
    fails = []
    js = subprocess.run(base + ["--json", site], capture_output=True, text=True, env=env, timeout=300)
    doc = json.loads(js.stdout)
    jit = [f for f in doc["findings"] if f["id"] == "fatbin.no-sass"]
    if js.returncode != 0:
        fails.append(f"--json exit {js.returncode}, want 0: {[(f['id'], f['severity']) for f in doc['findings']]}")
    if len(jit) != 1 or not jit[0]["vendor_internal"] or jit[0]["severity"] != "info":
        fails.append(f"want one vendor_internal info fatbin.no-sass, got {jit}")
    elif "SASS: sm_50 sm_52 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 | PTX: compute_80 compute_90" not in jit[0]["evidence"][0]:
        fails.append(f"architectures not in numeric order: {jit[0]['evidence'][0]}")
    text = subprocess.run(base + [site], capture_output=True, text=True, env=env, timeout=300)
    if text.returncode != 0 or "[fatbin.no-sass]" in text.stdout or "--verbose shows them" not in text.stdout:
        fails.append(f"text: exit {text.returncode}, the note shown or not counted:\n{text.stdout[:2000]}")
    verbose = subprocess.run(base + ["--verbose", site], capture_output=True, text=True, env=env, timeout=300)
    if "[fatbin.no-sass] libcusparse.so.12: 109 of 132 fatbin containers have no SASS for sm_120" not in verbose.stdout:
        fails.append(f"--verbose does not show the note:\n{verbose.stdout[:2000]}")
    for f in fails:
        print("FAIL: " + f)
    if not fails:
        print("ok: cuSPARSE's PTX-only sm_120 containers are a hidden vendor note; exit 0; --verbose shows it")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
