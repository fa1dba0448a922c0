#!/usr/bin/env bash
# run_pool_cost.sh: where a pooled alloc+free pair's time goes on the GPU host (docs/pool.md's 50x goal).
# One call, about a minute:
#   1. pool_bench under the shim, call sites on (the default): raw vs pooled pairs;
#   2. the same with CUDASHIM_SITES=0: what the call-site recording costs a pooled pair;
#   3. pool_bench without the shim: the driver's own pair, nothing hooked;
#   4. bench_primitives: this CPU's clock read and atomic costs, the unit of the shim's work.
# Needs .carry/gpu from bench/perf_prebuild.sh (pool_bench, bench_primitives, the shim). Run:
#   run(command="bash gpu/run_pool_cost.sh", carry=[".carry/gpu"], timeout_s=300)
set -uo pipefail
cd "$(dirname "$0")/.."
OUTD=${OUT:-gpu-results}
mkdir -p "$OUTD"
SHIM=$PWD/.carry/gpu/shim/libcudashim.so
B=$PWD/.carry/gpu/bench
R=$OUTD/results.md
{
  echo "# Pooled pair cost on the GPU host"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- GPU, driver: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  echo "- CPU: $(lscpu | awk -F: '/Model name/{gsub(/^ +/,"",$2); print $2; exit}')"
  echo "- shim built from: $(cat .carry/gpu/perf-commit.txt 2>/dev/null || echo unknown)"
  echo "- command: \`bash gpu/run_pool_cost.sh\`"
} > "$R"
run() {  # title, then the environment and command
  local title=$1; shift
  { echo; echo "## $title"; echo; echo '```'; } >> "$R"
  env "$@" >> "$R" 2>&1
  echo "exit $?" >> "$R"
  echo '```' >> "$R"
}
run "1. under the shim, call sites on (default)" LD_PRELOAD="$SHIM" CUDASHIM_LOG_LEVEL=error CUDASHIM_OUT=/tmp/pc1 \
  timeout 100 "$B/pool_bench" --rounds 3 --pairs 200
run "2. under the shim, call sites off (CUDASHIM_SITES=0)" LD_PRELOAD="$SHIM" CUDASHIM_SITES=0 CUDASHIM_LOG_LEVEL=error \
  CUDASHIM_OUT=/tmp/pc2 timeout 100 "$B/pool_bench" --rounds 3 --pairs 200
run "3. no shim (both columns are the driver's own pair)" timeout 100 "$B/pool_bench" --rounds 2 --pairs 200
run "4. this CPU's primitives" timeout 60 "$B/bench_primitives"
cat "$R"
