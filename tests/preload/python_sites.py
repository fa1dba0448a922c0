#!/usr/bin/env python3
"""python_sites.py: a finding names the Python line that made the call.

Runs a small Python loop under the shim for each CPython found (3.11 with the GIL
held; 3.12 and 3.13 also with the GIL released, as PyTorch releases it inside its
ops). The loop reaches the runtime test double through ctypes: PyDLL keeps the GIL
during the call, CDLL releases it. Each loop does a 4-byte device-to-host copy and
a stream sync, 30 times: a scalar read-back. The report's finding must name the
line of the sync call in this file.
usage: python_sites.py SHIM FAKECUDA_DIR CUDART_PATH
"""
import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile


def child(cudart):
    held = ctypes.PyDLL(cudart)      # the GIL stays held during the call
    released = ctypes.CDLL(cudart)   # the GIL is released during the call
    buf = ctypes.c_void_p()
    assert held.cudaMalloc(ctypes.byref(buf), ctypes.c_size_t(64)) == 0
    out = ctypes.create_string_buffer(4)
    for _ in range(30):
        held.cudaMemcpy(out, buf, ctypes.c_size_t(4), 2)
        held.cudaStreamSynchronize(None)  # LINE-HELD
    for _ in range(30):
        released.cudaMemcpy(out, buf, ctypes.c_size_t(4), 2)
        released.cudaStreamSynchronize(None)  # LINE-RELEASED


def line_of(tag):
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith("# " + tag):
                return i
    raise AssertionError(tag)


def interpreters():
    found = []
    for cand in [sys.executable] + sorted(glob.glob("/root/.pyenv/versions/3.1[23]*/bin/python3.1[23]")) + \
            ["/usr/bin/python3.12", "/usr/bin/python3.13"]:
        if os.path.exists(cand) and cand not in found:
            found.append(cand)
    return found


def main():
    shim, fake, cudart = sys.argv[1:4]
    errors, ran = [], 0
    for py in interpreters():
        ver = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True,
                             text=True).stdout.strip()
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="error")
            p = subprocess.run([py, __file__, "--child", cudart], env=env, capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                errors.append(f"python {ver}: child exited {p.returncode}: {p.stderr[-800:]}")
                continue
            reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
            wheres = [s["where"] for r in reps for fnd in r["findings"] if fnd["id"] == "sync.scalar-readback"
                      for s in fnd["sites"]]
            base = os.path.basename(__file__)
            want = [("GIL held", line_of("LINE-HELD"))]
            if ver in ("3.12", "3.13"):
                want.append(("GIL released", line_of("LINE-RELEASED")))
            for what, line in want:
                if not any(f"{base}:{line} " in w for w in wheres):
                    errors.append(f"python {ver}, {what}: no scalar-readback finding names {base}:{line}; sites: {wheres}")
            ran += 1
            print(f"python {ver}: sites {wheres}")
    if ran == 0:
        errors.append("no CPython interpreter could run the test")
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print(f"ok: findings name the Python line on {ran} interpreter(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        sys.exit(main())
