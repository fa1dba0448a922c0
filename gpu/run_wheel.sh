#!/usr/bin/env bash
# run_wheel.sh: the GPU-host proof of the wheel, in one call from the repository root.
# The wheel is carried (.carry/gpu/wheel/cudashim-*.whl, from scripts/build_wheel.sh or the
# build tree's dist/), never the build tree: it is pip-installed with --target into a fresh
# folder (no root, no index), and gpu/run_gpu.sh then runs every case (static and shared
# cudart, the driver API, CUDA 12.9, the torch training loop, libtorch) through that
# installation's `cudashim run` (CUDASHIM_RUNNER=cli), with the exact-count checks of
# gpu/check_gpu_report.py. Results in $OUT (results.md: the table).
set -uo pipefail
cd "$(dirname "$0")/.."
WHL=$(ls -t .carry/gpu/wheel/cudashim-*.whl 2>/dev/null | head -n 1)
if [ -z "$WHL" ]; then
  echo "run_wheel: no wheel in .carry/gpu/wheel/; copy dist/cudashim-*.whl there" >&2
  exit 1
fi
SITE=$(mktemp -d "${TMPDIR:-/tmp}/cudashim-wheel.XXXXXX")
python3 -m pip install --quiet --no-index --no-deps --disable-pip-version-check --target "$SITE" "$WHL" || exit 1
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
echo "run_wheel: $(basename "$WHL") installed with pip --target $SITE; glibc $(ldd --version | head -1 | awk '{print $NF}')"
SHIM=$(python3 -c 'import cudashim; print(cudashim.library_path())') CLI=$SITE/bin/cudashim CUDASHIM_RUNNER=cli \
  exec bash gpu/run_gpu.sh
