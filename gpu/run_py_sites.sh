#!/usr/bin/env bash
# run_py_sites.sh: after the Python 3.12/3.13 frame reader changed (05eeedc: frames read in place
# with the GIL held too, lines read once per site, entry frames skipped), do findings in a real
# torch job still name the user's line? Runs three sync patterns of gpu/sync_patterns under the
# shim and prints each finding's site. One short GPU-host call:
#   run(command="bash gpu/run_py_sites.sh", carry=[".carry/gpu"], timeout_s=90)
set -uo pipefail
cd "$(dirname "$0")/.."
SHIM=$PWD/.carry/gpu/shim/libcudashim.so
W=$(mktemp -d)
for p in item synchronize pageable; do
  mkdir -p "$W/$p"
  STEPS=30 PYTHONPATH=gpu/sync_patterns LD_PRELOAD=$SHIM CUDASHIM_OUT=$W/$p CUDASHIM_LOG_LEVEL=error \
    timeout 40 python3 "gpu/sync_patterns/$p.py" > /dev/null 2>&1
  echo "$p.py: exit $?"
  python3 - "$W/$p" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/cudashim-*.json"):
    for fnd in json.load(open(f))["findings"]:
        if fnd["severity"] != "info":
            print(f"  {fnd['id']}: {fnd['count']} calls at {[s['where'] for s in fnd['sites'][:2]]}")
PY
done
