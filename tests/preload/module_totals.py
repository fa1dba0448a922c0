#!/usr/bin/env python3
"""module_totals.py: a run's module-load totals are the same figure live and in the report.

A child program loads fatbin containers through the test double's cuModuleLoadData (ctypes on
libcuda.so.1), each with 40 MiB of sm_80 machine code and 1 KiB for the double's sm_90: two,
then 1.5 s later (past a re-read of the library watcher, which crosses the 64 MiB threshold of
fatbin.mostly-other-archs on the first two) a third. Whenever the threshold fell, the report's
fatbin.mostly-other-archs must name the total registered (120.0 MiB of machine code), and the one live line for it must carry the same figure (before, the live line
said 80.0 MiB, the total at the tick that crossed the threshold).
usage: module_totals.py SHIM FAKECUDA_DIR
"""
import ctypes
import glob
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

OTHER, OWN = 40 << 20, 1024  # bytes of machine code per container: for sm_80, for sm_90


def entry(arch, payload):
    """A cubin entry (kind 2): its 64-byte header (symbols/fatbin.h), then the payload."""
    h = bytearray(64)
    struct.pack_into("<HHIQ", h, 0, 2, 0x0101, 64, payload)
    struct.pack_into("<HH", h, 24, 8, 1)
    struct.pack_into("<I", h, 28, arch)
    struct.pack_into("<Q", h, 40, 0x11)
    return bytes(h) + b"A" * payload


def container():
    body = entry(80, OTHER) + entry(90, OWN)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def child():
    cu = ctypes.CDLL("libcuda.so.1")
    assert cu.cuInit(0) == 0
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cu.cuCtxSetCurrent(ctx) == 0
    image = ctypes.create_string_buffer(container())
    mod = ctypes.c_void_p()
    for batch in (2, 1):
        for _ in range(batch):
            assert cu.cuModuleLoadData(ctypes.byref(mod), image) == 0
        time.sleep(1.5)


def main():
    shim, fake = sys.argv[1:3]
    errors = []
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="info")
        env.pop("CUDASHIM_SUMMARY", None)
        p = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            errors.append(f"child exited {p.returncode}: {p.stderr[-800:]}")
        reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
        if len(reps) != 1:
            errors.append(f"{len(reps)} reports: {p.stderr[-800:]}")
        else:
            want = "of 120.0 MiB of machine code loaded at run time"
            found = [f for f in reps[0].get("library_findings", []) if f["id"] == "fatbin.mostly-other-archs"]
            got = [f["message"] for f in found]
            print("report:", got)
            if len(got) != 1 or not got[0].startswith(want):
                errors.append(f"the report's fatbin.mostly-other-archs is {got}, not the total registered: {want!r}")
            live = [line for line in p.stderr.splitlines() if "[fatbin.mostly-other-archs]" in line]
            print("live:", live)
            figures = [re.search(r"of ([\d.]+ MiB) of machine code", line) for line in live]
            if len(live) != 1 or figures[0] is None or figures[0].group(1) != "120.0 MiB":
                errors.append(f"the live line(s) for fatbin.mostly-other-archs do not say the run's 120.0 MiB once: {live}")
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print("ok")
    return 1 if errors else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child()
    else:
        sys.exit(main())
