#!/usr/bin/env bash
# quickstart.sh: what a new user does, on a fresh Debian 12 or Ubuntu machine:
#   1. scripts/setup.sh: the build's packages and the CUDA headers (no toolkit needed);
#   2. scripts/build_wheel.sh: the cudashim wheel, in dist/;
#   3. pip install of that wheel into a fresh venv, .venv/ (no root);
#   4. `cudashim run` on examples/sync_patterns.py (ctypes on the driver: no toolkit,
#      no torch). On a machine without a GPU the example and the summary say so plainly.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build_wheel.sh dist
whl=$(ls -t dist/cudashim-*-py3-none-manylinux_2_28_x86_64.whl | head -n 1)
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$whl"
echo
echo "== .venv/bin/cudashim run -- python3 examples/sync_patterns.py =="
exec .venv/bin/cudashim run --out quickstart-run -- python3 examples/sync_patterns.py 200
