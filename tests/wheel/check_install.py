#!/usr/bin/env python3
"""check_install.py --build DIR --fakecuda DIR --cudart LIBCUDART --cli CLI

`cmake --install` without root: the build tree installed into a fresh prefix, then that
prefix's bin/cudashim run (no --shim, no CUDASHIM_LIB) must preload the prefix's own
lib/libcudashim.so into NVIDIA's libcudart 12.9 on the test-double driver, with exact counts.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

PROBE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "oldglibc", "cudart_probe.py")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--fakecuda", required=True)
    ap.add_argument("--cudart", required=True)
    ap.add_argument("--cli", required=True)
    a = ap.parse_args()
    errors = []
    with tempfile.TemporaryDirectory(prefix="cudashim-install-") as d:
        prefix = os.path.join(d, "prefix")
        p = subprocess.run(["cmake", "--install", a.build, "--prefix", prefix], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL: cmake --install: {p.stderr}")
            return 1
        files = sorted(os.path.relpath(f, prefix) for f in glob.glob(os.path.join(prefix, "**", "*"), recursive=True)
                       if os.path.isfile(f))
        print(f"installed: {files}")
        want = ["bin/cudashim", "lib/libcudashim.so", "share/bash-completion/completions/cudashim",
                "share/man/man1/cudashim.1", "share/zsh/site-functions/_cudashim"]
        if files != want:
            errors.append(f"expected {want}, got {files}")
        names = subprocess.run([a.cli, "hooks", "--names"], check=True, capture_output=True, text=True).stdout
        names_file = os.path.join(d, "names.txt")
        with open(names_file, "w") as f:
            f.write(names)
        env = dict(os.environ, LD_LIBRARY_PATH=a.fakecuda, CUDASHIM_TEST_HOOK_NAMES=names_file)
        env.pop("CUDASHIM_LIB", None)
        out = os.path.join(d, "run")
        r = subprocess.run([os.path.join(prefix, "bin", "cudashim"), "run", "--out", out, "--", sys.executable, PROBE,
                            a.cudart, names_file], env=env, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            errors.append(f"prefix/bin/cudashim run: exit {r.returncode}: {r.stderr}")
        else:
            probe = json.loads(r.stdout.strip().splitlines()[-1])
            want = os.path.realpath(os.path.join(prefix, "lib", "libcudashim.so"))
            if probe.get("shim") != [want]:
                errors.append(f"the process mapped {probe.get('shim')}, not the prefix's {want}")
            reps = [f for f in glob.glob(os.path.join(out, "cudashim-*.json")) if not f.endswith("-crash.json")]
            if len(reps) != 1:
                errors.append(f"expected one report, found {reps}")
            else:
                api = json.load(open(reps[0])).get("api", {})
                for abi, n in probe["truth"].items():
                    if api.get(abi, {}).get("calls", 0) != n:
                        errors.append(f"{abi}: report {api.get(abi, {}).get('calls', 0)}, driver {n}")
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print("ok: cmake --install into a user prefix; its cudashim run preloads its own library; exact counts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
