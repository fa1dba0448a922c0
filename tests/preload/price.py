#!/usr/bin/env python3
"""price.py SHIM FAKECUDA_DIR CUDART_PATH: every runtime finding is priced (issue 33, item 1).

A Python loop reaches the runtime test double through ctypes: each step does FAKECUDA_SYNC_DELAY_US
of "GPU" wait at a read-back (a 4-byte async copy into pageable memory and a stream sync, on one
line, as cupy.asnumpy does), then HOST_MS of the host's own work before the next step's work.
- host-bound (2 ms read-back, 10 ms host work): one finding at that line (sync.scalar-readback,
  `also` copy.async-from-pageable: one habit, one finding), a warning, about 2 ms blocked and
  10 ms GPU idle after per step, and a predicted saving of min(blocked, host's own time per step):
  the blocked time; the exit summary prints the saving.
- wait-bound (5 ms read-back, 1 ms host work): the saving is min(blocked, step - blocked), here the
  blocked time too: the double's wait is the host's sleep, no GPU runs beside the host, and its
  NVML gives too few samples in a 0.5 s loop for the GPU-idle term (tests/unit: predicted_saving).
- cheap (no delay): the same habit saves microseconds a step: info, its fix naming the floor; with
  both floors set to 0 (CUDASHIM_WARN_MIN_SAVING_US, CUDASHIM_WARN_MIN_STEP_SHARE) a warning again.
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

STEPS = 40


def child(cudart, host_ms):
    cu = ctypes.PyDLL(cudart)
    buf = ctypes.c_void_p()
    assert cu.cudaMalloc(ctypes.byref(buf), ctypes.c_size_t(64)) == 0
    out = ctypes.create_string_buffer(4)  # pageable host memory
    for _ in range(STEPS):
        cu.cudaMemset(buf, 0, ctypes.c_size_t(4))  # the step's GPU work
        cu.cudaMemcpyAsync(out, buf, ctypes.c_size_t(4), 2, None); cu.cudaStreamSynchronize(None)  # LINE-READBACK
        end = time.perf_counter() + host_ms / 1000.0
        while time.perf_counter() < end:  # the host's own work after the read-back
            pass


def run(shim, fake, cudart, delay_us, host_ms, extra=None):
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="warn",
                   FAKECUDA_SYNC_DELAY_US=str(delay_us), **(extra or {}))
        p = subprocess.run([sys.executable, __file__, "--child", cudart, str(host_ms)], env=env, capture_output=True,
                           text=True, timeout=120)
        reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
        return p, reps


def at_line(reps):
    where = f"{os.path.basename(__file__)}:{line_of(__file__, 'LINE-READBACK')} (child)"
    return [f for r in reps for f in r["findings"] if any(where in s["where"] for s in f["sites"])]


def main():
    shim, fake, cudart = sys.argv[1:4]
    errors = []

    def check(cond, what):
        if not cond:
            errors.append(what)

    # host-bound: the saving is the blocked time
    p, reps = run(shim, fake, cudart, 2000, 10)
    check(p.returncode == 0 and len(reps) == 1, f"host-bound: exit {p.returncode}, {len(reps)} reports: {p.stderr[-600:]}")
    fs = at_line(reps)
    check([f["id"] for f in fs] == ["sync.scalar-readback"], f"host-bound: one habit, one finding: {[f['id'] for f in fs]}")
    if fs:
        f = fs[0]
        bps, ips, save = f["blocked_per_step_ns"], f["gpu_idle_after_per_step_ns"], f["predicted_saving_per_step_ns"]
        print(f"host-bound: {f['severity']}, steps {f['steps']}, blocked {bps / 1e6:.3f} ms + idle {ips / 1e6:.3f} ms a step, "
              f"saving {save / 1e6:.3f} ms of a {f['step_ns'] / 1e6:.3f} ms step, also {f['also']}")
        check(f["also"] == ["copy.async-from-pageable"], f"host-bound: also {f['also']}")
        check(f["severity"] == "warning", f"host-bound: severity {f['severity']}")
        check(f["steps"] >= STEPS - 12, f"host-bound: steps {f['steps']}")
        check(2.0e6 <= bps <= 8.0e6, f"host-bound: blocked per step {bps} ns, expected 2 ms and more (a loaded machine)")
        check(ips >= 9.0e6, f"host-bound: GPU idle after per step {ips} ns, expected >= 9 ms")
        check(save == min(bps, f["step_ns"] - bps), f"host-bound: saving {save} ns is not min(blocked {bps}, step - blocked)")
        check(11.5e6 <= f["step_ns"] <= 40e6, f"host-bound: step {f['step_ns']} ns, expected 12 ms and more")
        check(abs(f["saving_share_of_step"] - save / f["step_ns"]) < 1e-3, f"host-bound: share {f['saving_share_of_step']}")
        check(0 < f["share_of_loop"] < 0.5, f"host-bound: share of the loop {f['share_of_loop']}")
        check(f"save {save / 1e6:.3f} ms/step" in p.stderr and "(also copy.async-from-pageable)" in p.stderr,
              f"host-bound: the exit summary prints no saving: {p.stderr[-800:]}")
    # GPU-bound: the saving is the idle after
    p, reps = run(shim, fake, cudart, 5000, 1)
    fs = at_line(reps)
    check(len(fs) == 1, f"GPU-bound: findings at the line {[f['id'] for f in fs]}: {p.stderr[-600:]}")
    if fs:
        f = fs[0]
        bps, ips, save = f["blocked_per_step_ns"], f["gpu_idle_after_per_step_ns"], f["predicted_saving_per_step_ns"]
        print(f"GPU-bound: {f['severity']}, blocked {bps / 1e6:.3f} ms + idle {ips / 1e6:.3f} ms, saving {save / 1e6:.3f} ms")
        check(bps >= 5.0e6 and save == min(bps, f["step_ns"] - bps),
              f"GPU-bound: saving {save}, blocked {bps}, step {f['step_ns']}: not min(blocked, step - blocked)")
        check(f["severity"] == "warning", f"GPU-bound: severity {f['severity']}")
    # cheap: below the floor, info; the floors at 0 make it a warning again
    p, reps = run(shim, fake, cudart, 0, 2)
    fs = at_line(reps)
    check(len(fs) == 1, f"cheap: findings at the line {[f['id'] for f in fs]}: {p.stderr[-600:]}")
    if fs:
        f = fs[0]
        print(f"cheap: {f['severity']}, saving {f['predicted_saving_per_step_ns']} ns; fix: {f['fix'][:90]}")
        check(f["severity"] == "info", f"cheap: severity {f['severity']} (saving {f['predicted_saving_per_step_ns']} ns)")
        check(f["fix"].startswith("below the warning floor"), f"cheap: fix {f['fix']}")
        check(f["predicted_saving_per_step_ns"] < 20000, f"cheap: saving {f['predicted_saving_per_step_ns']}")
    p, reps = run(shim, fake, cudart, 0, 2, {"CUDASHIM_WARN_MIN_SAVING_US": "0", "CUDASHIM_WARN_MIN_STEP_SHARE": "0"})
    fs = at_line(reps)
    check([f["severity"] for f in fs] == ["warning"], f"cheap, floors 0: {[(f['id'], f['severity']) for f in fs]}")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], float(sys.argv[3]))
        sys.exit(0)
    sys.exit(main())
