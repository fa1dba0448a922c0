#!/usr/bin/env python3
"""version_probe.py SHIM FAKECUDA_DIR PROG: the library watcher never calls into cuDNN.

A libtorch C++ program that loads cuDNN but never uses it died with SIGSEGV inside
cudnnGetVersion, called by the shim's own thread when it re-read the library inventory
(GPU host, 2026-11-29). Here a cuDNN stand-in aborts when its cudnnGetVersion is called:
the program must end as without the shim, and the report must list the library with
its version from the file name.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile


def main():
    shim, fake, prog = sys.argv[1:4]
    lib = os.path.join(fake, "cudnn", "libcudnn_graph.so.9")
    errors = []
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="error")
        p = subprocess.run([prog, lib], env=env, capture_output=True, text=True, timeout=60)
        if p.returncode != 0 or "cudnnGetVersion was called" in p.stderr:
            errors.append(f"exit {p.returncode} (expected 0): {p.stderr.strip()[-400:]}")
        reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
        libs = [l for r in reps for l in r.get("libraries", []) if l["path"].endswith("libcudnn_graph.so.9")]
        if len(reps) != 1 or not libs:
            errors.append(f"{len(reps)} reports; cuDNN rows {libs}")
        elif (libs[0]["family"], libs[0]["version"], libs[0]["version_source"]) != ("cudnn", "9", "file name"):
            errors.append(f"cuDNN row: {libs[0]}")
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print("ok: cuDNN listed with its version from the file name; its code was never called")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
