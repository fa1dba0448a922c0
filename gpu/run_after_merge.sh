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
#   idlesplit/ gpu/realworld/idle_compare.py --split: the idle loops plus cnn-readback (a torchvision
#              ResNet-18 on random 64x64 images, batch 128, an f-string of the loss every step),
#              sampling on, torch.profiler's idle share beside the split the diagnosis was decided
#              from; exit 1 and "FAIL" rows when a diagnosis contradicts its own split (issue 36;
#              about 120 s, limit 150 s; not in the default STEPS: STEPS=idlesplit)
#   managed/   gpu/realworld/managed_paging.py: a managed buffer paged by CPU and GPU in turn, and a
#              prefetched control, under the shim: estimated bytes each way, the finding or its
#              absence (issue 20 item 4; table.md)
#   precise/   gpu/realworld/precise_compare.py: torch.profiler's idle share, the default
#              mode's and the precise mode's (CUPTI) side by side, and the precise mode's step
#              time against the profiler's (issue 20; not in the default STEPS: STEPS=precise)
#   joblimits/ gpu/run_job_limits.sh: small thread stacks, a file-size limit and forked children in a
#              torch job, with and without the shim (issue 37; not in the default STEPS: STEPS=joblimits)
#   fleet/     gpu/run_fleet.sh: a real Prometheus scrapes `cudashim exporter` while a real torch job and
#              its planted form run under the shim; what Prometheus returned for the idle share and
#              the findings, beside each job's report (issue 34; not in the default STEPS: STEPS=fleet;
#              needs .carry/gpu/prometheus/prometheus; about 75 s)
#   doctor/    `cudashim doctor` on the host's torch site-packages: exit status, first screen,
#              --json (issue 21)
#   siteoverhead.md  bench/python_site_overhead.py: a hooked sync from Python, f064834's preload
#              library against this build's (.carry/gpu/siteoverhead/), CPython 3.12 (issue 19)
#   html/      `cudashim report --html` of the torch loop's reports (screenshot it on a CPU machine)
#   price/     gpu/realworld/price_bench.py: each habit program of the corpus (habit_*.py: .item(),
#              print(f"{loss}"), if t.any():, tqdm's set_postfix, synchronize, empty_cache, a pageable
#              non_blocking copy, cupy.asnumpy, .item() in a compiled function, a read-back in a
#              site-packages helper) fixed and planted in 8 alternating timed blocks of one process
#              under the shim, and clean in another: the report's predicted saving per step against
#              the measured difference, recall and clean-quiet (issue 33 item 3; price.md is the table
#              to commit under gpu/results/; not in the default STEPS: STEPS=price, <= 300 s;
#              PRICE_ONLY=habit_item,habit_pageable runs only those habits)
#   sampling/  bench/gpu_sampling_overhead.py: the default mode's NVML sampling on and off in
#              alternating processes of one torch training loop, and its counted cost (issue 20:
#              <= 0.5 % of the step); sampling.md is the table (commit it under bench/results/)
#   selfcost/  bench/selfcost.py: a host-bound torch loop (CPU batch preparation of ~2 ms a step,
#              the GPU's work overlapping it), 4 bare and 4 `cudashim run` (default mode) worker
#              processes started once, then blocks of 150 steps in turn (ABBA) for 90 s: the
#              verdict line "settled: shim costs X % +- Y % (95 %) ..." or "not settled: ...", the
#              per-pair figures, the reports' self_cost (whole run and steady) and the flush
#              thread's parts; selfcost.md is the table (commit it under bench/results/; issue 33
#              item 4; not in the default STEPS: STEPS=selfcost, about 115 s, limit 150 s; every
#              worker pinned to the same 4 CPUs (--cpus auto; SELFCOST_CPUS=none or a list);
#              SELFCOST_PAIRS, SELFCOST_SECONDS change the shape)
#   screen/    gpu/realworld/screen.py: a small clean torch training job (ResNet-18 on random 64x64
#              images, 100 steps, a DataLoader with num_workers=2) under `cudashim run` through
#              `bash -c`: the summary a person reads, its line count, and each part checked
#              (headline, memory, libraries in one line, the processes that made no CUDA call in one
#              line); exit 1 when it is longer than 25 lines, 2 when a required part is missing
#              (issue 33 item 5; not in the default STEPS: STEPS=screen, <= 120 s)
# Budget: about 13 minutes (corpus 250 s, wheel 100 s, idle 200 s, sampling 160 s, managed 30 s, the rest
# seconds):
# past a 10-minute call, run the sampling step as a call of its own (STEPS=sampling).
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
STEPS=${STEPS:-wheel,corpus,idle,managed,doctor,html,sampling}  # a subset: STEPS=idle,doctor
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

if step joblimits; then  # not in the default STEPS: issue 37's job-side defects with a real torch job
  say "== joblimits: gpu/run_job_limits.sh"
  OUT=$OUT/joblimits CLI=$CLI timeout -k 5 300 bash gpu/run_job_limits.sh > "$OUT/joblimits.log" 2>&1
  say "joblimits: exit $?"; tail -n 5 "$OUT/joblimits.log"
fi

if step fleet; then  # not in the default STEPS: issue 34's exporter scraped by a real Prometheus
  say "== fleet: gpu/run_fleet.sh"
  OUT=$OUT/fleet CLI=$CLI timeout -k 5 150 bash gpu/run_fleet.sh > "$OUT/fleet.log" 2>&1
  say "fleet: exit $?"; tail -n 3 "$OUT/fleet.log"
fi

if step jaxstudy; then  # not in the default STEPS: which JAX threads sync, and what the main thread does then
  say "== jaxstudy: gpu/realworld/jax_threads.py"
  mkdir -p "$OUT/jaxstudy"
  for form in clean planted; do
    flag=; [ $form = planted ] && flag=--planted
    timeout -k 5 120 "$CLI" run --quiet --out "$OUT/jaxstudy/$form" python3 gpu/realworld/jax_threads.py $flag --steps 300 \
      > "$OUT/jaxstudy/$form.log" 2>&1 || say "jax_threads $form: exit $?"
    python3 gpu/realworld/jax_threads.py --analyze "$OUT/jaxstudy/$form" 2>&1 | tee "$OUT/jaxstudy/$form.txt"
  done
  # The planted loop's time with and without the shim (its wait sampler running), alternating.
  for round in 1 2 3; do
    for side in bare shim; do
      if [ $side = shim ]; then
        timeout -k 5 120 "$CLI" run --quiet --out "$OUT/jaxstudy/cost-$round" python3 gpu/realworld/jax_threads.py --planted --steps 1000
      else
        timeout -k 5 120 python3 gpu/realworld/jax_threads.py --planted --steps 1000
      fi 2>/dev/null | sed "s/^/$side: /" | tee -a "$OUT/jaxstudy/cost.txt"
    done
  done
fi

if step idle; then
say "== idle: gpu/realworld/idle_compare.py"
mkdir -p "$OUT/idle"
IDLE_RUNS=$(mktemp -d "${TMPDIR:-/tmp}/cudashim-idle.XXXXXX")  # the runs stay here: few files come back
# 5 s loops: NVML's diagnosis needs 12 samples of its 200 ms period in the steady state, which a
# 3 s loop's first-fifth window (a loop of launches only has no call site to make it the host's) misses.
timeout -k 5 290 python3 gpu/realworld/idle_compare.py "$CLI" "$IDLE_RUNS" --seconds 5 > "$OUT/idle/table.md" 2>&1
say "idle_compare: exit $?"
cp "$IDLE_RUNS/idle_compare.json" "$OUT/idle/" 2>/dev/null
tar -C "$IDLE_RUNS" -czf "$OUT/idle/runs.tar.gz" .
cat "$OUT/idle/table.md"
fi

if step idlesplit; then
say "== idlesplit: gpu/realworld/idle_compare.py --split"
mkdir -p "$OUT/idlesplit"
SPLIT_RUNS=$(mktemp -d "${TMPDIR:-/tmp}/cudashim-idlesplit.XXXXXX")
timeout -k 5 150 python3 gpu/realworld/idle_compare.py "$CLI" "$SPLIT_RUNS" --split --seconds 3 \
  > "$OUT/idlesplit/table.md" 2>&1
say "idle_compare --split: exit $? (1: a diagnosis contradicts its split; 124: past 150 s)"
cp "$SPLIT_RUNS/idle_compare.json" "$OUT/idlesplit/" 2>/dev/null
for d in "$SPLIT_RUNS"/*/; do  # each run's report and exit summary, small
  n=$(basename "$d"); mkdir -p "$OUT/idlesplit/$n"
  cp "$d"/cudashim-*.json "$d"/stderr.txt "$OUT/idlesplit/$n/" 2>/dev/null
done
tail -n 9 "$OUT/idlesplit/table.md"
fi

if step managed; then
  say "== managed: gpu/realworld/managed_paging.py"
  mkdir -p "$OUT/managed"
  MANAGED_RUNS=$(mktemp -d "${TMPDIR:-/tmp}/cudashim-managed.XXXXXX")
  timeout -k 5 150 python3 gpu/realworld/managed_paging.py "$CLI" "$MANAGED_RUNS" --seconds 8 > "$OUT/managed/table.md" 2>&1
  say "managed_paging: exit $?"
  cp "$MANAGED_RUNS/managed_paging.json" "$OUT/managed/" 2>/dev/null
  cat "$OUT/managed/table.md"
fi

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

if step doctor; then
say "== doctor: the host's torch"
mkdir -p "$OUT/doctor"
SP=$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
"$CLI" doctor "$SP" > "$OUT/doctor/text.txt" 2> "$OUT/doctor/stderr.txt"
echo "exit $?" > "$OUT/doctor/exit.txt"
"$CLI" doctor --json "$SP" > "$OUT/doctor/doctor.json" 2>> "$OUT/doctor/stderr.txt"
"$CLI" doctor --verbose "$SP" > "$OUT/doctor/verbose.txt" 2>> "$OUT/doctor/stderr.txt"
say "doctor $SP: $(cat "$OUT/doctor/exit.txt"), $(wc -l < "$OUT/doctor/text.txt") lines"
head -n 25 "$OUT/doctor/text.txt"
fi

if step siteoverhead; then
  # The user-frame walk's cost per hooked sync from Python (issue 19), on this host's CPython:
  # the preload library of f064834 (before the walk) against this build's, on the test double.
  say "== siteoverhead: bench/python_site_overhead.py"
  SO=.carry/gpu/siteoverhead
  timeout -k 5 120 python3 bench/python_site_overhead.py --base "$SO/base.so" --new "$SO/new.so" --fakecuda "$SO/fakecuda" \
    --rounds 5 --calls 5000 --batches 10 --base-label "$(cat "$SO/base.label" 2>/dev/null)" \
    --new-label "$(cat "$SO/new.label" 2>/dev/null)" --out "$OUT/siteoverhead.md" 3.12 > "$OUT/siteoverhead.log" 2>&1
  say "python_site_overhead: exit $?"
  grep '^| 3.12' "$OUT/siteoverhead.md"
fi

if step html; then
say "== html: the torch loop's page"
mkdir -p "$OUT/html"
TORCH_RUN=$(ls -td /tmp/cudashim-gpu.*/reports/torch 2>/dev/null | head -n 1)
if [ -n "$TORCH_RUN" ]; then
  "$CLI" report --html "$OUT/html/torch.html" "$TORCH_RUN" > "$OUT/html/summary.txt" 2>&1
  say "report --html: exit $?"
else
  say "no torch run folder found under /tmp/cudashim-gpu.*"
fi
fi
if step selfcost; then  # not in the default STEPS: issue 33.4, does the default mode cost anything
  say "== selfcost: bench/selfcost.py (bare vs cudashim run, host-bound torch loop, alternating)"
  mkdir -p "$OUT/selfcost"
  env -u STEPS timeout -k 5 150 python3 bench/selfcost.py run --cli "$CLI" --out "$OUT/selfcost" \
    --pairs "${SELFCOST_PAIRS:-4}" --seconds "${SELFCOST_SECONDS:-90}" --total 125 \
    --cpus "${SELFCOST_CPUS:-auto}" > "$OUT/selfcost.log" 2>&1
  say "selfcost: exit $?"
  # Cut short: the table of the rounds it finished, from its figures.
  [ -f "$OUT/selfcost/selfcost.md" ] || python3 bench/selfcost.py table "$OUT/selfcost/selfcost.json" \
    > "$OUT/selfcost/selfcost.md" 2>> "$OUT/selfcost.log" || rm -f "$OUT/selfcost/selfcost.md"
  cat "$OUT/selfcost/selfcost.md" 2>/dev/null || tail -n 20 "$OUT/selfcost.log"
fi

if step sampling; then
  say "== sampling: bench/gpu_sampling_overhead.py (NVML sampling on and off, ABAB)"
  mkdir -p "$OUT/sampling"
  env -u STEPS ROUNDS=${SAMPLING_ROUNDS:-6} timeout -k 5 240 python3 bench/gpu_sampling_overhead.py "$SITE/cudashim/lib/libcudashim.so" \
    "$OUT/sampling" > "$OUT/sampling.log" 2>&1
  say "gpu_sampling_overhead: exit $?"
  cat "$OUT/sampling/sampling.md" 2>/dev/null || tail -n 20 "$OUT/sampling.log"
fi
if step price; then
  say "== price: gpu/realworld/price_bench.py (planted against fixed, alternating blocks)"
  mkdir -p "$OUT/price"
  timeout -k 5 300 python3 gpu/realworld/price_bench.py --cli "$CLI" --rounds 8 --steps 100 --budget-s 270 \
    --only "${PRICE_ONLY:-}" --out "$OUT/price" > "$OUT/price.log" 2>&1
  say "price_bench: exit $?"
  cat "$OUT/price/price.md" 2>/dev/null || tail -n 20 "$OUT/price.log"
  rm -rf "$OUT/price/scratch"
fi
if step screen; then  # not in the default STEPS: issue 33.5, the summary fits one screen
  say "== screen: gpu/realworld/screen.py (a torch job's summary, at most 25 lines)"
  mkdir -p "$OUT/screen"
  timeout -k 5 120 python3 gpu/realworld/screen.py "$CLI" "$OUT/screen" 2>&1 | tee "$OUT/screen/screen.log"
  rc=${PIPESTATUS[0]}
  rm -rf "$OUT/screen/run"  # the reports and traces stay on the host: summary.txt and stderr.txt come back
  say "screen: exit $rc (1: longer than 25 lines; 2: a part missing; 3: the job failed; 124: past 120 s)"
fi
say "== done: $OUT"
