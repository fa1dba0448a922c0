#!/usr/bin/env bash
# run_hook_overhead.sh: measure what libcudashim.so adds to one intercepted call, side by side with the
# direct call, through the test-double driver, and write bench/results/hook_overhead-cpu.md.
#
#   bench/run_hook_overhead.sh [benchmark options]      e.g. --rounds 1001 --calls 2000
#
# Builds the benchmark, the preload library and the double in Release (-O2) into build-bench/ (or
# $BENCH_BUILD_DIR), runs bench_hook_overhead under LD_PRELOAD, writes the table (with this command in
# its header) and prints it. A missed goal is reported in the table, not by the exit status.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BENCH_BUILD_DIR:-$ROOT/build-bench}
OUT=$ROOT/bench/results/hook_overhead-cpu.md

cmake_args=(-S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG")
[ -n "${CUDASHIM_CUDA_INCLUDE:-}" ] && cmake_args+=("-DCUDASHIM_CUDA_INCLUDE=$CUDASHIM_CUDA_INCLUDE")
cmake "${cmake_args[@]}" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target bench_hook_overhead cudashim_preload fakecuda >/dev/null

# BENCH_COMMIT overrides the label (e.g. when measuring an exported tree that has no .git).
commit=${BENCH_COMMIT:-unknown}
if [ -z "${BENCH_COMMIT:-}" ] && git -C "$ROOT" rev-parse --short HEAD >/dev/null 2>&1; then
  commit=$(git -C "$ROOT" rev-parse --short HEAD)
  # Uncommitted changes to what is measured make the hash insufficient: say so.
  if [ -n "$(git -C "$ROOT" --no-optional-locks status --porcelain -- shim recorder policy tests/fakecuda bench CMakeLists.txt)" ]; then
    commit="$commit (+ uncommitted changes)"
  fi
fi

reports=$(mktemp -d)
trap 'rm -rf "$reports" "$OUT.tmp"' EXIT
mkdir -p "$(dirname "$OUT")"
LD_PRELOAD="$BUILD/lib/libcudashim.so" LD_LIBRARY_PATH="$BUILD/fakecuda" CUDASHIM_OUT="$reports" \
  "$BUILD/bin/bench_hook_overhead" --commit "$commit" --command "bench/run_hook_overhead.sh${*:+ $*}" "$@" >"$OUT.tmp"
# The alloc+free row claims every pair went through the ledger: show the ledger the shim reported at exit.
python3 - "$reports" >>"$OUT.tmp" <<'PY'
import glob, json, sys
files = glob.glob(sys.argv[1] + "/cudashim-*.json")
if len(files) != 1:
    sys.exit(f"expected one shim report, found {files}")
rep = json.load(open(files[0]))
dev = [d for d in rep["memory"]["devices"] if d["device"] == 0][0]["kinds"]["device"]
print(f"\nLedger at exit (the shim's report): device 0 allocs {dev['allocs']}, frees {dev['frees']}, "
      f"live {dev['live_allocations']}; ledger_overflows {rep['memory']['ledger_overflows']}, "
      f"unknown_frees {rep['memory']['unknown_frees']}.")
PY
mv "$OUT.tmp" "$OUT"
cat "$OUT"
echo "(written to ${OUT#"$ROOT"/})" >&2
