#!/usr/bin/env bash
# test.sh: the whole test suite, as CI runs it. Installs what is missing, builds
# against both CUDA header sets (13.0 from /usr/local/cuda, 12.9 from the wheel in
# .deps/), runs CTest on each. Ends with CTest's summary; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh build-cu129 "$PWD/.deps/cu129/nvidia/cuda_runtime/include"
./scripts/build.sh build /usr/local/cuda/include
status=0
echo "== CTest, CUDA 12.9 headers (build-cu129) =="
(cd build-cu129 && ctest --output-on-failure -j"$(nproc)") || status=1
echo "== CTest, CUDA 13.0 headers (build) =="
(cd build && ctest --output-on-failure -j"$(nproc)") || status=1
exit $status
