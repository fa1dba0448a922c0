#!/usr/bin/env python3
"""crash_nocuda.py SHIM FAKECUDA_DIR: no flight record for a process that never used CUDA (issue 22, item 9).

Every preloaded process gets the shim, CUDA or not; a Python process that aborts or
faults (os.abort(), a segfault with faulthandler on) must end as without the shim and
leave nothing in CUDASHIM_OUT. The same abort after one CUDA call leaves its 0600 record.
"""
import os
import stat
import subprocess
import sys
import tempfile

shim, fake = sys.argv[1:3]
CUDA = "import ctypes; assert ctypes.CDLL('libcuda.so.1').cuInit(0) == 0; "
CASES = [
    # name, argv, a record expected
    ("os.abort(), no CUDA", [sys.executable, "-c", "import os; os.abort()"], False),
    ("segfault under faulthandler, no CUDA", [sys.executable, "-X", "faulthandler", "-c",
                                              "import ctypes; ctypes.string_at(0)"], False),
    ("os.abort() after a CUDA call", [sys.executable, "-c", CUDA + "import os; os.abort()"], True),
]
errors = []
for name, argv, want in CASES:
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
            if with_shim and bool(records) != want:
                errors.append(f"{name}: flight records {records}, expected {'one' if want else 'none'}")
            if with_shim and not want and os.listdir(out):
                errors.append(f"{name}: files left by a process that never used CUDA: {os.listdir(out)}")
            for r in records:
                mode = stat.S_IMODE(os.stat(os.path.join(out, r)).st_mode)
                if mode != 0o600:
                    errors.append(f"{name}: {r} has mode {oct(mode)}")
            if with_shim:
                print(f"{name}: ended {p.returncode} (without the shim {codes[0]}); files {sorted(os.listdir(out))}")
    if codes[0] != codes[1]:
        errors.append(f"{name}: ended {codes[1]} with the shim, {codes[0]} without")
for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: no flight record without CUDA; each process ends as without the shim")
sys.exit(1 if errors else 0)
