#!/usr/bin/env bash
# build.sh [BUILD_DIR [CUDA_INCLUDE]]: configure and build cudashim with its tests
# (default: build/ against the CUDA 13 headers scripts/cuda_include.sh finds). The fast
# build, tests off, is scripts/build_wheel.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
inc=${2:-$(./scripts/cuda_include.sh)}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDASHIM_CUDA_INCLUDE="$inc" >/dev/null
fi
cmake --build "$dir" -j"$(nproc)"
