#!/usr/bin/env python3
"""two_cudarts.py SHIM FAKECUDA_DIR PROG CUDART13 CUDART129: NVIDIA's libcudart 13.0
and 12.9 loaded into one process; the report lists both and its
library.mixed-majors-in-process finding names both files, and the exit log says so."""
import glob
import json
import os
import subprocess
import sys
import tempfile

shim, fake, prog, rt13, rt129 = sys.argv[1:6]
extra = sys.argv[6:]  # more libraries to load, e.g. libnccl.so.2: their version API must answer
with tempfile.TemporaryDirectory() as out:
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_TEST_HOOK_NAMES="/dev/null")
    p = subprocess.run([prog, rt13, rt129, *extra], env=env, capture_output=True, text=True, timeout=60)
    reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
    errors = []
    if p.returncode != 0 or len(reps) != 1:
        errors.append(f"exit {p.returncode}, {len(reps)} reports: {p.stderr[-400:]}")
    else:
        r = reps[0]
        files = {os.path.realpath(rt13), os.path.realpath(rt129)}
        listed = {l["file"] for l in r["libraries"] if l["family"] == "cudart"}
        if not files <= listed:
            errors.append(f"libraries lists {listed}, expected both {files}")
        versions = {l["version"] for l in r["libraries"] if l["family"] == "cudart"}
        if not {"13.0", "12.9"} <= versions or any(l["version_source"] != "cudaRuntimeGetVersion"
                                                    for l in r["libraries"] if l["family"] == "cudart"):
            errors.append(f"cudart versions from cudaRuntimeGetVersion: {[(l['file'], l['version'], l['version_source']) for l in r['libraries']]}")
        for path in extra:
            row = [l for l in r["libraries"] if l["file"] == os.path.realpath(path)]
            if not row or not row[0]["version_source"].endswith("GetVersion") or row[0]["version"].count(".") < 1:
                errors.append(f"{path}: version not from its API: {row}")
            else:
                print(f"{os.path.basename(path)}: {row[0]['version']} from {row[0]['version_source']}")
        f = [x for x in r["library_findings"] if x["id"] == "library.mixed-majors-in-process"]
        if not f or not all(any(fl in e for e in f[0]["evidence"]) for fl in files):
            errors.append(f"no library.mixed-majors-in-process finding naming both files: {r['library_findings']}")
        if "[library.mixed-majors-in-process]" not in p.stderr:
            errors.append("no log line for the finding")
        else:
            print([l for l in p.stderr.splitlines() if "library.mixed-majors" in l][0][:300])
    for e in errors:
        print("FAIL: " + e)
    print("ok: both runtimes named" if not errors else "")
    sys.exit(1 if errors else 0)
