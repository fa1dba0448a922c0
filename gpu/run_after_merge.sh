#!/usr/bin/env bash
# run_after_merge.sh: every GPU-host check of one build of cudashim, in one call from the
# repository root. The build is a carried wheel, .carry/gpu/realworld/after/cudashim-*.whl
# (scripts/build_wheel.sh or the build tree's `wheel` target), pip-installed with --target
# into a fresh folder. In order, each into its own folder of $OUT:
#   wheel/     gpu/run_wheel.sh: the exact-count cases (static and shared cudart, the driver
#              API direct and through cuGetProcAddress, CUDA 12.9, the torch loop, libtorch)
#   corpus/    gpu/realworld/run.sh: the real-framework corpus, precision and recall (issue 19)
#   idle/      gpu/realworld/idle_compare.py: NVML idle share against torch.profiler's, per
#              loop, sampling on and off (issue 20)
#   precise/   gpu/realworld/precise_compare.py: torch.profiler's idle share, the default
#              mode's and the precise mode's (CUPTI) side by side, and the precise mode's step
#              time against the profiler's (issue 20; not in the default STEPS: STEPS=precise)
#   doctor/    `cudashim doctor` on the host's torch site-packages: exit status, first screen,
#              --json (issue 21)
#   html/      `cudashim report --html` of the torch loop's reports (screenshot it on a CPU machine)
# Budget: about 8 minutes (corpus 250 s, wheel 100 s, idle 130 s, the rest seconds).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/cudashim-after}
mkdir -p "$OUT"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
WHL=$(ls -t .carry/gpu/realworld/after/cudashim-*.whl 2>/dev/null | head -n 1)
[ -n "$WHL" ] || { echo "run_after_merge: no wheel in .carry/gpu/realworld/after/" >&2; exit 1; }
mkdir -p .carry/gpu/wheel && cp "$WHL" .carry/gpu/wheel/  # what run_wheel.sh installs (the newest there)
touch ".carry/gpu/wheel/$(basename "$WHL")"
SITE=$(mktemp -d "${TMPDIR:-/tmp}/cudashim-after.XXXXXX")
python3 -m pip install --quiet --no-index --no-deps --disable-pip-version-check --target "$SITE" "$WHL" || exit 1
CLI=$SITE/cudashim/bin/cudashim  # the CLI itself (bin/cudashim is the console script, which needs PYTHONPATH)
STEPS=${STEPS:-wheel,corpus,idle,doctor,html}  # a subset: STEPS=idle,doctor
step() { [[ ",$STEPS," == *",$1,"* ]]; }
say "installed $(basename "$WHL"): $("$CLI" --version)"

if step wheel; then
  say "== wheel: gpu/run_wheel.sh"
  OUT=$OUT/wheel timeout -k 5 200 bash gpu/run_wheel.sh > "$OUT/wheel.log" 2>&1
  say "run_wheel.sh: exit $?; $(tail -n 1 "$OUT/wheel.log")"
fi

if step corpus; then
say "== corpus: gpu/realworld/run.sh"
OUT=$OUT/corpus CORPUS_BUDGET_S=330 CORPUS_IDLE=0 timeout -k 5 340 bash gpu/realworld/run.sh .carry/gpu/realworld/after \
  > "$OUT/corpus.log" 2>&1
say "corpus: exit $?"
grep -A3 '^## Totals' "$OUT/corpus/results.md" 2>/dev/null | tail -n 1
fi

say "== idle: gpu/realworld/idle_compare.py"
mkdir -p "$OUT/idle"
IDLE_RUNS=$(mktemp -d "${TMPDIR:-/tmp}/cudashim-idle.XXXXXX")  # the runs stay here: few files come back
timeout -k 5 200 python3 gpu/realworld/idle_compare.py "$CLI" "$IDLE_RUNS" --seconds 3 > "$OUT/idle/table.md" 2>&1
say "idle_compare: exit $?"
cp "$IDLE_RUNS/idle_compare.json" "$OUT/idle/" 2>/dev/null
tar -C "$IDLE_RUNS" -czf "$OUT/idle/runs.tar.gz" .
cat "$OUT/idle/table.md"

if step precise; then
  say "== precise: gpu/realworld/precise_compare.py"
  mkdir -p "$OUT/precise"
  PRECISE_RUNS=$(mktemp -d "${TMPDIR:-/tmp}/cudashim-precise.XXXXXX")
  timeout -k 5 230 python3 gpu/realworld/precise_compare.py "$CLI" "$PRECISE_RUNS" --seconds 3 \
    > "$OUT/precise/table.md" 2>&1
  say "precise_compare: exit $?"
  cp "$PRECISE_RUNS/precise_compare.json" "$OUT/precise/" 2>/dev/null
  tar -C "$PRECISE_RUNS" -czf "$OUT/precise/runs.tar.gz" --exclude='*.trace' .
  cat "$OUT/precise/table.md"
fi

say "== doctor: the host's torch"
mkdir -p "$OUT/doctor"
SP=$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
"$CLI" doctor "$SP" > "$OUT/doctor/text.txt" 2> "$OUT/doctor/stderr.txt"
echo "exit $?" > "$OUT/doctor/exit.txt"
"$CLI" doctor --json "$SP" > "$OUT/doctor/doctor.json" 2>> "$OUT/doctor/stderr.txt"
"$CLI" doctor --verbose "$SP" > "$OUT/doctor/verbose.txt" 2>> "$OUT/doctor/stderr.txt"
say "doctor $SP: $(cat "$OUT/doctor/exit.txt"), $(wc -l < "$OUT/doctor/text.txt") lines"
head -n 25 "$OUT/doctor/text.txt"

say "== html: the torch loop's page"
mkdir -p "$OUT/html"
TORCH_RUN=$(ls -td /tmp/cudashim-gpu.*/reports/torch 2>/dev/null | head -n 1)
if [ -n "$TORCH_RUN" ]; then
  "$CLI" report --html "$OUT/html/torch.html" "$TORCH_RUN" > "$OUT/html/summary.txt" 2>&1
  say "report --html: exit $?"
else
  say "no torch run folder found under /tmp/cudashim-gpu.*"
fi
say "== done: $OUT"
