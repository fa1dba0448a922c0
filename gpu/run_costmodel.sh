#!/usr/bin/env bash
# run_costmodel.sh: the per-call hook cost on this host's CPU (bench_hook_overhead through the
# test-double driver, carried in .carry/gpu/bench), then gpu/costmodel.py: the shim's own counts
# of hooked calls per training step, priced by those costs. Writes $OUT/results-costmodel.md.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTD=${OUT:-gpu-results}; mkdir -p "$OUTD"
B=$PWD/.carry/gpu/bench
SHIM=$PWD/.carry/gpu/shim/libcudashim.so
LD_PRELOAD=$SHIM LD_LIBRARY_PATH=$B CUDASHIM_OUT=$(mktemp -d) "$B/bench_hook_overhead" --rounds 101 > "$OUTD/hook_overhead-h200host.md" 2>&1
echo "bench exit $?"; grep -E "^\| (pass|timed|alloc)" "$OUTD/hook_overhead-h200host.md"
# The call-site cost in a Python process: SITES=0 vs SITES=1, interleaved, 5 each.
s0=() s1=()
for i in 1 2 3 4 5; do
  for s in 0 1; do
    v=$(LD_PRELOAD=$SHIM LD_LIBRARY_PATH=$B CUDASHIM_OUT=$(mktemp -d) CUDASHIM_LOG_LEVEL=off CUDASHIM_SITES=$s python3 gpu/site_cost.py)
    if [ "$s" = 0 ]; then s0+=("$v"); else s1+=("$v"); fi
  done
done
read -r PY_SITE_NS <<<"$(python3 -c "import statistics,sys; a=[float(x) for x in sys.argv[1].split()]; b=[float(x) for x in sys.argv[2].split()]; print(max(0.0, statistics.median(b) - statistics.median(a)))" "${s0[*]}" "${s1[*]}")"
echo "site cost: SITES=0 ${s0[*]} ns; SITES=1 ${s1[*]} ns; difference of medians $PY_SITE_NS ns" | tee "$OUTD/site-cost.txt"
export PY_SITE_NS PY_SITE_SOURCE="measured here: gpu/site_cost.py under the shim, SITES=1 minus SITES=0, median of 5 interleaved runs each"
timeout 400 python3 gpu/costmodel.py "$SHIM" "$OUTD" "$OUTD/hook_overhead-h200host.md"
echo "costmodel exit $?"
