#!/usr/bin/env bash
# startup.sh [SHIM]: the shim's start-up cost, side by side: /bin/true 200 times
# with and without LD_PRELOAD, alternating; prints the medians and the difference.
set -euo pipefail
cd "$(dirname "$0")/.."
SHIM=${1:-$PWD/build/lib/libcudashim.so}
python3 - "$SHIM" <<'PY'
import os, statistics, subprocess, sys, time
shim = sys.argv[1]
def run(w):
    env = dict(os.environ); env.pop("LD_PRELOAD", None)
    if w: env["LD_PRELOAD"] = shim
    t = time.perf_counter(); subprocess.run(["/bin/true"], env=env); return time.perf_counter() - t
a, b = [], []
for i in range(200):
    for w in ((False, True) if i % 2 else (True, False)):
        (b if w else a).append(run(w))
ma, mb = statistics.median(a) * 1e3, statistics.median(b) * 1e3
print(f"/bin/true x200 alternating: median {ma:.3f} ms without, {mb:.3f} ms with the shim: {mb - ma:+.3f} ms")
PY
