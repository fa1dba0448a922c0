#!/usr/bin/env bash
# perf_prebuild.sh [BUILD_DIR] [CARRY]: build here (no GPU needed) what bench/perf_table.sh runs on
# the GPU host, into CARRY (default .carry/gpu, git-ignored), from a configured tree BUILD_DIR
# (default build): the stripped preload library and CLI, the per-call benchmark with its test-double
# driver (a Release tree of its own, build-bench, as bench/run_hook_overhead.sh uses), the host
# primitives benchmark, and the two CUDA programs (nvcc, sm_90). Writes CARRY/perf-commit.txt for
# the table's header.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
CARRY=${2:-.carry/gpu}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$CARRY/shim" "$CARRY/bench"
cmake --build "$BUILD" -j"$(nproc)" --target cudashim_preload cudashim_cli >/dev/null
strip -g -o "$CARRY/shim/libcudashim.so" "$BUILD/lib/libcudashim.so"
strip -g -o "$CARRY/shim/cudashim" "$BUILD/bin/cudashim"
BENCH=${BENCH_BUILD_DIR:-build-bench}
cmake -S . -B "$BENCH" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" >/dev/null
cmake --build "$BENCH" -j"$(nproc)" --target bench_hook_overhead fakecuda >/dev/null
cp -f "$BENCH/bin/bench_hook_overhead" "$CARRY/bench/"
cp -fL "$BENCH/fakecuda/libcuda.so.1" "$CARRY/bench/libcuda.so.1"
${CXX:-g++} -O2 -std=c++20 -o "$CARRY/bench/bench_primitives" bench/primitives.cpp -lpthread
"$NVCC" -O2 -arch=sm_90 -o "$CARRY/bench/pool_bench" bench/pool_bench.cu -lcuda
"$NVCC" -O2 -arch=sm_90 -o "$CARRY/bench/alloc_train" bench/alloc_train.cu
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git status --porcelain -- shim recorder policy symbols bench 2>/dev/null)" ] && commit="$commit (+ uncommitted changes)"
echo "$commit" > "$CARRY/perf-commit.txt"
echo "perf_prebuild: $CARRY ready (commit $commit)"
