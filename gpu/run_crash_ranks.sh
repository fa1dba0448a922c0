#!/usr/bin/env bash
# run_crash_ranks.sh: two processes as two ranks of one job on the one GPU (each under
# `cudashim run`, RANK=0 and RANK=1, at the same time), and a PyTorch program whose
# custom kernel makes an illegal memory access. Writes $OUT/results-crash-ranks.md.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTD=${OUT:-gpu-results}
mkdir -p "$OUTD"
CLI=$PWD/.carry/gpu/shim/cudashim
export CUDASHIM_LIB=$PWD/.carry/gpu/shim/libcudashim.so PYTHONUNBUFFERED=1 NO_COLOR=1
W=$(mktemp -d)
for r in 0 1; do
  RANK=$r STEPS=40 PYTHONPATH=gpu/sync_patterns "$CLI" run --quiet --out "$W/ranks" -- python3 gpu/sync_patterns/clean.py > "$W/rank$r.log" 2>&1 &
done
wait
"$CLI" report "$W/ranks" > "$OUTD/ranks.txt" 2>&1
"$CLI" run --out "$W/crash" -- python3 gpu/illegal_access.py > "$W/crash.log" 2>&1
echo "exit $?" >> "$W/crash.log"
"$CLI" report "$W/crash" > "$OUTD/crash.txt" 2>&1
cp "$W"/crash/*-crash.json "$OUTD/" 2>/dev/null
{
  echo "# Two ranks on one GPU, and a crash (H200, $(date -u +%Y-%m-%d))"
  echo; echo "## \`cudashim report\` of the two ranks"; echo '```'; cat "$OUTD/ranks.txt"; echo '```'
  echo; echo "## The illegal memory access: the program's end, then \`cudashim report\`"; echo '```'; tail -5 "$W/crash.log"; echo; cat "$OUTD/crash.txt"; echo '```'
} > "$OUTD/results-crash-ranks.md"
cat "$OUTD/results-crash-ranks.md"
