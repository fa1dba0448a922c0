#!/usr/bin/env bash
# run_libtorch_crash.sh: why bench/libtorch_train died with SIGSEGV under the shim in the
# performance table's run (2026-11-29, bench/results/perf-table-h200-2026-11-29.md) while
# Python torch jobs did not. On the GPU host, in one call:
#   run(command="bash gpu/run_libtorch_crash.sh", carry=[".carry/gpu"], timeout_s=300)
# Builds libtorch_train, runs it under every preload library in .carry/gpu/debug/*.so (builds
# of different commits, unstripped; named <commit>.so) with and without call sites, then once
# under cuda-gdb for the backtrace. Writes $OUT/crash.txt and the shim's crash files.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTDIR=${OUT:-/tmp/libtorch-crash}
mkdir -p "$OUTDIR"
W=$(mktemp -d)
exec > >(tee "$OUTDIR/crash.txt") 2>&1
t0=$(date +%s)
bash bench/build_libtorch_train.sh "$W/lt" > "$W/build.log" 2>&1 || { echo "build failed"; tail -20 "$W/build.log"; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
"$W/lt" --model mlp --steps 20 --warmup 5; echo "no shim: rc=$?"
for s in .carry/gpu/debug/*.so; do
  for e in "CUDASHIM_SITES=1" "CUDASHIM_SITES=0" "CUDASHIM_MEM_CAP=100GiB"; do
    mkdir -p "$W/out"
    env "$e" LD_PRELOAD="$PWD/$s" CUDASHIM_OUT="$W/out" "$W/lt" --model mlp --steps 20 --warmup 5 2>&1 | tail -3
    echo "$(basename "$s") $e: rc=${PIPESTATUS[0]}"
  done
done
last=$(ls .carry/gpu/debug/*.so | tail -1)
GDB=$(command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)
timeout 120 "$GDB" -batch -ex "set exec-wrapper env LD_PRELOAD=$PWD/$last CUDASHIM_OUT=$W/out" -ex run -ex bt \
  -ex "info registers rip" -ex "x/6i \$pc-12" --args "$W/lt" --model mlp --steps 20 --warmup 5 2>&1 | grep -v "^\[New Thread\|^\[Thread" | tail -60
cp -r "$W/out" "$OUTDIR/shim-out" 2>/dev/null
exit 0
