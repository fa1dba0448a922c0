#!/usr/bin/env bash
# build.sh [BUILD_DIR [CUDA_INCLUDE]]: configure and build cudashim (default: build/
# against /usr/local/cuda/include, i.e. CUDA 13.0).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
inc=${2:-/usr/local/cuda/include}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDASHIM_CUDA_INCLUDE="$inc" >/dev/null
fi
cmake --build "$dir" -j"$(nproc)"
