#!/usr/bin/env bash
# build_wheel.sh [OUT_DIR]: the cudashim wheel in one command (default: dist/), then
# checked: auditwheel show (when scripts/setup.sh --tests installed it) and the highest
# glibc version each native file needs (tests/hygiene/check_glibc.py).
# This is also the fast build: only the preload library and the CLI, tests and examples
# off, in build-wheel/ (CUDASHIM_WHEEL_BUILD=DIR builds an existing tree instead).
# Needs what scripts/setup.sh installs; no network, no root.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
mkdir -p "$out"
python3 -m pip wheel --quiet --no-deps --no-build-isolation --disable-pip-version-check -w "$out" .
whl=$(ls -t "$out"/cudashim-*-py3-none-manylinux_2_28_x86_64.whl | head -n 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m zipfile -e "$whl" "$tmp"
python3 tests/hygiene/check_glibc.py "$tmp/cudashim/lib/libcudashim.so" "$tmp/cudashim/bin/cudashim"
if [ -d .deps/pytools/auditwheel ]; then
  PYTHONPATH=$PWD/.deps/pytools python3 -m auditwheel show "$whl"
fi
echo "build_wheel: $whl"
echo "install it with: python3 -m pip install $whl   (a venv, --user or --target DIR: no root needed)"
