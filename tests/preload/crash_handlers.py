#!/usr/bin/env python3
"""crash_handlers.py SHIM FAKECUDA_DIR ENDINGS: the shim's crash handlers are invisible (issue 22.6).

The shim installed its handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT as it was
loaded, before Python started: Python reads every signal's action at start-up, so
`signal.getsignal()` answered None for all five in every preloaded Python process, CUDA or
not, and `old = signal.signal(SIGABRT, h); signal.signal(SIGABRT, old)` raised TypeError
(exit 1; 0 without the shim). Each case runs without and with the shim and must end the
same way; with the shim, the handlers of the program still get their signals, Python's
faulthandler still prints its traceback, and a process that used CUDA still leaves its
crash record.
"""
import os
import subprocess
import sys
import tempfile

shim, fake, endings = sys.argv[1:4]
CUDA = "import ctypes; cuda = ctypes.CDLL('libcuda.so.1'); assert cuda.cuInit(0) == 0\n"
SAVE_RESTORE = r"""
import signal
names = ["SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT"]
seen = {n: signal.getsignal(getattr(signal, n)) for n in names}
bad = {n: h for n, h in seen.items() if h is not signal.SIG_DFL}
if bad:
    raise SystemExit(f"signal.getsignal() is not SIG_DFL: {bad}")
for n in names:
    s = getattr(signal, n)
    old = signal.signal(s, lambda *a: None)
    signal.signal(s, old)  # TypeError when old is None
print("saved and restored all five")
"""
LATER_HANDLER = r"""
import os, signal
got = []
for n in ["SIGABRT", "SIGSEGV", "SIGBUS"]:
    s = getattr(signal, n)
    signal.signal(s, lambda sig, frame: got.append(sig))
    os.kill(os.getpid(), s)
print("the program's handlers got", sorted(got))
if len(got) != 3:
    raise SystemExit(3)
"""
SEGV = "import ctypes; ctypes.string_at(0)\n"
FAULTHANDLER = "import faulthandler; faulthandler.enable()\n"
CASES = [
    # name, argv, a crash record expected with the shim, text the program's stderr must hold
    ("getsignal, save and restore, no CUDA", [sys.executable, "-c", SAVE_RESTORE], False, None),
    ("getsignal, save and restore, after a CUDA call", [sys.executable, "-c", CUDA + SAVE_RESTORE], False, None),
    ("handlers installed after a CUDA call get the signals", [sys.executable, "-c", CUDA + LATER_HANDLER], False,
     None),
    ("faulthandler enabled after a CUDA call, then a segfault", [sys.executable, "-c", CUDA + FAULTHANDLER + SEGV],
     True, "Fatal Python error: Segmentation fault"),
    ("faulthandler from the start (-X faulthandler), a CUDA call, a segfault",
     [sys.executable, "-X", "faulthandler", "-c", CUDA + SEGV], True, "Fatal Python error: Segmentation fault"),
    ("native SA_ONSTACK|SA_RESETHAND handler, set before CUDA, stack overflow", [endings, "altstack"], True,
     "overflow handled on the alternate stack, SIGSEGV reset"),
]
errors = []
for name, argv, want_record, want_text in CASES:
    codes = []
    for with_shim in (False, True):
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="warn")
            env.pop("LD_PRELOAD", None)
            if with_shim:
                env["LD_PRELOAD"] = shim
            p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
            codes.append(p.returncode)
            records = [f for f in os.listdir(out) if f.endswith("-crash.json")]
            if want_text and want_text not in p.stderr:
                errors.append(f"{name} ({'with' if with_shim else 'without'} the shim): no {want_text!r} in "
                              f"stderr: {p.stderr[-600:]}")
            if with_shim:
                if bool(records) != want_record:
                    errors.append(f"{name}: crash records {records}, expected {'one' if want_record else 'none'}")
                print(f"{name}: ended {p.returncode} (without the shim {codes[0]}); crash record: "
                      f"{'yes' if records else 'no'}; {(p.stdout.strip() or p.stderr.strip()[-120:])!r}")
    if codes[0] != codes[1]:
        errors.append(f"{name}: ended {codes[1]} with the shim, {codes[0]} without")
for e in errors:
    print("FAIL: " + e)
if not errors:
    print(f"ok: {len(CASES)} cases; the crash handlers are invisible to the program and records are still written")
sys.exit(1 if errors else 0)
