#!/usr/bin/env bash
# run.sh: the corpus of real framework programs (gpu/realworld), on the GPU host, in ONE call.
#
#   bash gpu/realworld/run.sh BEFORE [AFTER]
#
# BEFORE and AFTER are two builds of cudashim to compare: each the cudashim executable, a wheel
# (.whl), a folder holding one (.carry/gpu/wheel-before/), a pip --target folder, a virtual
# environment or a build tree. Without arguments: .carry/gpu/realworld/before and .../after.
# For each program it runs the clean and the planted form without the shim (wall time), then each
# form under each CLI's `cudashim run` (gpu/realworld/check.py scores the reports), two runs side
# by side (CORPUS_JOBS=1: one at a time); then the four reference loops of
# gpu/realworld/idle_loops.py if time is left. All of it stays under CORPUS_BUDGET_S
# (default 525 s, for a device call of 600): runs that would not fit become "skipped" rows.
# CORPUS_ONLY=hf_trainer,jax_mlp runs only those programs; CORPUS_IDLE=0 leaves idle_loops.py out. In $OUT: results.md (the tables), corpus.json and idle_loops.json (the numbers), run.log,
# reports.tar.gz (every report, stdout and stderr of every run).
set -uo pipefail
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
BUDGET=${CORPUS_BUDGET_S:-525}
IDLE_S=75  # what idle_loops.py needs, start-up included
WORK=$(mktemp -d "${TMPDIR:-/tmp}/corpus.XXXXXX")
RESULTS=${OUT:-$WORK/out}
mkdir -p "$RESULTS"
exec > >(tee "$RESULTS/run.log") 2>&1
TEE_PID=$!
T0=$SECONDS
say() { echo "[$((SECONDS - T0))s] $*"; }

BEFORE=${1:-.carry/gpu/realworld/before}
AFTER=${2-.carry/gpu/realworld/after}
[ $# -eq 1 ] && AFTER=""
CLIS=(--cli "before=$BEFORE")
[ -n "$AFTER" ] && CLIS+=(--cli "after=$AFTER")

say "== host"
date -u +%Y-%m-%dT%H:%M:%SZ
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader 2>&1 | head -2
HOST=$(python3 - <<'EOF' 2>&1
import importlib.metadata as md, platform
vers = []
for m in ("torch", "transformers", "lightning", "torchvision", "jax", "jaxlib", "cupy-cuda13x", "nvidia-nccl-cu13"):
    try:
        vers.append(f"{m} {md.version(m)}")  # the installed version, without the cost of importing it
    except md.PackageNotFoundError:
        vers.append(f"{m} missing")
print(f"Python {platform.python_version()}; " + ", ".join(vers))
EOF
)
echo "$HOST"

say "== the corpus: check.py ${CLIS[*]} --baseline (deadline $((BUDGET - IDLE_S - 15 - (SECONDS - T0))) s)"
python3 gpu/realworld/check.py "${CLIS[@]}" --baseline --jobs "${CORPUS_JOBS:-2}" --only "${CORPUS_ONLY:-}" \
  --out "$WORK/runs" --json "$RESULTS/corpus.json" \
  --md "$WORK/corpus.md" --deadline-s $((BUDGET - IDLE_S - 15 - (SECONDS - T0)))
say "check.py: exit $?"

LEFT=$((BUDGET - 15 - (SECONDS - T0)))
if [ "${CORPUS_IDLE:-1}" = 1 ] && [ "$LEFT" -ge 45 ]; then
  say "== idle_loops.py (limit $LEFT s)"
  timeout -k 5 "$LEFT" python3 gpu/realworld/idle_loops.py --json "$RESULTS/idle_loops.json" > "$WORK/idle_loops.md" \
    2> "$WORK/idle_loops.err"
  rc=$?
  say "idle_loops.py: exit $rc"
  [ "$rc" != 0 ] && { echo; echo "idle_loops.py: exit $rc:"; tail -5 "$WORK/idle_loops.err"; } >> "$WORK/idle_loops.md"
  cat "$WORK/idle_loops.md"
else
  echo "idle_loops.py: not run (CORPUS_IDLE=${CORPUS_IDLE:-1}, $LEFT s left)" > "$WORK/idle_loops.md"
fi

{
  echo "# The real-framework corpus on the GPU host"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ), run time $((SECONDS - T0)) s (budget $BUDGET s)"
  echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "- $HOST"
  echo "- command: \`bash gpu/realworld/run.sh ${BEFORE} ${AFTER}\`"
  echo
  cat "$WORK/corpus.md" 2>/dev/null || echo "check.py wrote no tables (see run.log)"
  echo
  echo "## GPU idle share of four reference loops (idle_loops.py, torch.profiler)"
  echo
  cat "$WORK/idle_loops.md"
} > "$RESULTS/results.md"

tar -C "$WORK" -czf "$RESULTS/reports.tar.gz" runs 2>/dev/null
if [ "$(stat -c %s "$RESULTS/reports.tar.gz" 2>/dev/null || echo 0)" -gt 15000000 ]; then
  tar -C "$WORK" --exclude='*.ndjson' -czf "$RESULTS/reports.tar.gz" runs 2>/dev/null  # the 16 MiB limit per file
fi
say "== done: $RESULTS (results.md, corpus.json, idle_loops.json, run.log, reports.tar.gz)"
exec 1>&- 2>&-
wait "$TEE_PID" 2>/dev/null
exit 0
