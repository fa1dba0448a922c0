#!/usr/bin/env bash
# perf_table.sh: the performance table (bench/results/perf-table-h200-2026-11-29.md) in one call on the GPU host. Prebuild here with
# `bash bench/perf_prebuild.sh`, then on the GPU host:
#   run(command="bash bench/perf_table.sh", carry=[".carry/gpu"], timeout_s=600)
# Writes $OUT/perf-table.md (commit it as bench/results/perf-table-<gpu>-<date>.md), perf-raw.jsonl
# and perf-run.log. CARRY (default .carry/gpu) and BUDGET_S (default 540) can be set.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTDIR=${OUT:-${1:-/tmp/perf-table}}
mkdir -p "$OUTDIR"
python3 bench/perf_table.py "${CARRY:-.carry/gpu}" "$OUTDIR" 2>&1 | tee "$OUTDIR/perf-run.log"
exit "${PIPESTATUS[0]}"
