#!/usr/bin/env python3
"""python_sites.py: a finding names the Python line that made the call, on CPython X.Y.

Runs a small Python loop under the shim on CPython X.Y (scripts/pythons.sh finds it;
CTest runs this once per version, 3.10 to 3.14), with the GIL held and with the GIL
released, as PyTorch releases it inside its ops. The loop reaches the runtime test
double through ctypes: PyDLL keeps the GIL during the call, CDLL releases it. Each
loop does a 4-byte device-to-host copy and a stream sync, 30 times: a scalar
read-back. The report's finding must name the line of the sync call in this file and
its function, and its Python stack must start there; without the GIL, that is the
shim's own frame reader for that version (shim/python_stack.cpp). With --unsupported
(CPython 3.9, which the reader does not know): the GIL-held line is still named, and the
GIL-released site carries no Python line at all rather than a wrong one.
usage: python_sites.py SHIM FAKECUDA_DIR CUDART_PATH X.Y PYTHONS_SH [--unsupported]
"""
import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

from preload_support import line_of, interpreter


def child(cudart):
    held = ctypes.PyDLL(cudart)      # the GIL stays held during the call
    released = ctypes.CDLL(cudart)   # the GIL is released during the call
    buf = ctypes.c_void_p()
    assert held.cudaMalloc(ctypes.byref(buf), ctypes.c_size_t(64)) == 0
    out = ctypes.create_string_buffer(4)
    for _ in range(30):
        time.sleep(0.001)  # a step's own work: a loop takes time (sync.loop_share, docs/findings.md)
        held.cudaMemcpy(out, buf, ctypes.c_size_t(4), 2)
        held.cudaStreamSynchronize(None)  # LINE-HELD
    for _ in range(30):
        # Work at another place between the steps, as a real loop has (a kernel, the next
        # batch): where no Python line can be read (3.9, GIL released) the copy and the sync
        # share one native place, and without it the 30 steps would read as one burst.
        time.sleep(0.001)
        held.cudaMemset(buf, 0, ctypes.c_size_t(4))
        released.cudaMemcpy(out, buf, ctypes.c_size_t(4), 2)
        released.cudaStreamSynchronize(None)  # LINE-RELEASED


def main():
    shim, fake, cudart, version, pythons_sh = sys.argv[1:6]
    unsupported = sys.argv[6:7] == ["--unsupported"]
    py = interpreter(version, pythons_sh)
    if py is None:
        print(f"FAIL: no CPython {version} to run the test on (scripts/pythons.sh install fetches or finds one)")
        return 1
    errors = []
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="error")
        p = subprocess.run([py, __file__, "--child", cudart], env=env, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            print(f"FAIL: python {version} ({py}): child exited {p.returncode}: {p.stderr[-800:]}")
            return 1
        reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
        sites = [s for r in reps for fnd in r["findings"] if fnd["id"] == "sync.scalar-readback" for s in fnd["sites"]]
        base = os.path.basename(__file__)
        if unsupported:
            released = f"{base}:{line_of(__file__, 'LINE-RELEASED')} "
            if any(released in s["where"] or any(released in f for f in s["python"]) for s in sites):
                errors.append(f"an unsupported version names the GIL-released line: {[s['where'] for s in sites]}")
            if not any(s["python"] == [] and base not in s["where"] for s in sites):
                errors.append(f"no GIL-released site without a Python line (a native frame): {[s['where'] for s in sites]}")
        checks = [("GIL held", line_of(__file__, "LINE-HELD"))] + ([] if unsupported else [("GIL released", line_of(__file__, "LINE-RELEASED"))])
        for what, line in checks:
            where = f"{base}:{line} (child)"
            hit = [s for s in sites if where in s["where"]]
            if not hit:
                errors.append(f"{what}: no scalar-readback finding names {where}; sites: {[s['where'] for s in sites]}")
            elif not hit[0]["python"] or not hit[0]["python"][0].endswith(f"{base}:{line} (child)"):
                errors.append(f"{what}: the site's Python stack does not start at {where}: {hit[0]['python']}")
        print(f"python {version} ({py}): sites {[(s['where'], s['python'][:2]) for s in sites]}")
    for e in errors:
        print(f"FAIL: python {version}, {e}")
    if not errors:
        print(f"ok: python {version}: " + ("the GIL-held line is named, the GIL-released site has no Python line"
                                           if unsupported else "findings name the Python line with the GIL held and released"))
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        sys.exit(main())
