#!/usr/bin/env python3
"""loop_spread.py: a loop is a loop in time, not only in visits (docs/findings.md, sync.loop_share).

A child program reaches the runtime test double through ctypes (PyDLL: the GIL stays held, so
the shim reads its Python line) in one of three shapes:
  - burst: a start-up burst, as DDP's constructor broadcasting its parameters: 60 stream syncs
    at one line with a kernel launch between each two (60 visits), in a few milliseconds, then
    a long loop elsewhere (40 steps, 25 ms apart, a read-back at LINE-LOOP);
  - short: a genuine loop of 15 steps, 2 ms apart, and nothing after it;
  - train_eval: a training loop of 15 steps (a device sync at LINE-TRAIN, 20 ms apart), then a
    longer evaluation of 40 steps (a read-back at LINE-EVAL, 25 ms apart) without it;
  - late: as a Lightning Trainer, one early CUDA call (a copy at LINE-SETUP), then 1.5 s of
    host-only set-up, then a short loop of 15 steps, 2 ms apart (a device sync at LINE-LATE):
    the loop is 2 % of the time from the first CUDA call, all of the time the program repeats.
The report must show no finding at LINE-BURST, and sync.explicit-in-loop (a warning) at
LINE-SHORT, LINE-TRAIN and LINE-LATE, sync.scalar-readback at LINE-LOOP and LINE-EVAL. The live log
must agree with the report: no live warning at LINE-BURST, and the exit summary names each
finding and not LINE-BURST. The shapes' sleeps only spread the visits; nothing here is timed.
usage: loop_spread.py SHIM FAKECUDA_DIR CUDART_PATH
"""
import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

from preload_support import line_of


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def child(cudart, shape):
    rt = ctypes.PyDLL(cudart)
    rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    dev = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(1 << 20)) == 0
    out = ctypes.create_string_buffer(4)
    kernel = ctypes.cast(rt.cudaLaunchKernel, ctypes.c_void_p)  # any address: the double runs nothing

    def launch():
        rt.cudaLaunchKernel(kernel, Dim3(1, 1, 1), Dim3(32, 1, 1), None, 0, None)

    def readback(at):
        launch()
        rt.cudaMemcpy(out, dev, ctypes.c_size_t(4), 2)
        at()

    if shape == "burst":
        for _ in range(60):
            launch()
            rt.cudaStreamSynchronize(None)  # LINE-BURST
        for _ in range(40):
            time.sleep(0.025)
            readback(lambda: rt.cudaStreamSynchronize(None))  # LINE-LOOP
    elif shape == "short":
        for _ in range(15):
            time.sleep(0.002)
            launch()
            rt.cudaDeviceSynchronize()  # LINE-SHORT
    elif shape == "train_eval":
        for _ in range(15):
            time.sleep(0.02)
            launch()
            rt.cudaDeviceSynchronize()  # LINE-TRAIN
        for _ in range(40):
            time.sleep(0.025)
            readback(lambda: rt.cudaStreamSynchronize(None))  # LINE-EVAL
    elif shape == "late":
        rt.cudaMemcpy(out, dev, ctypes.c_size_t(4), 2)  # LINE-SETUP
        time.sleep(1.5)
        for _ in range(15):
            time.sleep(0.002)
            launch()
            rt.cudaDeviceSynchronize()  # LINE-LATE


# shape: (the tags that must be a warning with their finding, the tags that must be no finding)
EXPECT = {
    "burst": ({"LINE-LOOP": "sync.scalar-readback"}, ["LINE-BURST"]),
    "short": ({"LINE-SHORT": "sync.explicit-in-loop"}, []),
    "train_eval": ({"LINE-TRAIN": "sync.explicit-in-loop", "LINE-EVAL": "sync.scalar-readback"}, []),
    "late": ({"LINE-LATE": "sync.explicit-in-loop"}, ["LINE-SETUP"]),
}


def main():
    shim, fake, cudart = sys.argv[1:4]
    base = os.path.basename(__file__)
    errors = []
    for shape, (warned, quiet) in EXPECT.items():
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out)
            for k in ("CUDASHIM_LOG_LEVEL", "CUDASHIM_SUMMARY", "CUDASHIM_SYNC_LOOP_SHARE", "CUDASHIM_SYNC_WARMUP_HITS"):
                env.pop(k, None)
            p = subprocess.run([sys.executable, __file__, "--child", cudart, shape], env=env, capture_output=True,
                               text=True, timeout=120)
            say = lambda m: errors.append(f"{shape}: {m}")
            if p.returncode != 0:
                say(f"child exited {p.returncode}: {p.stderr[-800:]}")
                continue
            reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
            if len(reps) != 1:
                say(f"{len(reps)} reports")
                continue
            at = {}  # "file:line " -> [(id, severity)]
            for f in reps[0]["findings"]:
                for s in f["sites"]:
                    at.setdefault(os.path.basename(s["where"]).split(" ")[0], []).append((f["id"], f["severity"]))
            print(f"{shape}: " + "; ".join(f"{w} {v}" for w, v in sorted(at.items())))
            summary = p.stderr[p.stderr.find("findings for pid"):] if "findings for pid" in p.stderr else ""
            live = p.stderr[:p.stderr.find("findings for pid")] if summary else p.stderr
            for tag, fid in warned.items():
                where = f"{base}:{line_of(__file__, tag)}"
                if (fid, "warning") not in at.get(where, []):
                    say(f"no {fid} warning at {tag} ({where}): {at}")
                if f" {fid} " not in summary:
                    say(f"the exit summary does not name {fid}: {summary[-600:]!r}")
            for tag in quiet:
                where = f"{base}:{line_of(__file__, tag)}"
                if where in at:
                    say(f"{tag} ({where}), a start-up burst, is reported as a loop: {at[where]}")
                if f"{where} " in summary:
                    say(f"the exit summary names {tag} ({where}), a start-up burst: {summary[-600:]!r}")
                if any(where in line and "warning:" in line for line in live.splitlines()):
                    say(f"{tag} ({where}) was announced as a loop on the live log: {live[-600:]!r}")
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print("ok: " + ", ".join(EXPECT))
    return 1 if errors else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
