#!/usr/bin/env bash
# run_torch_memory.sh: one GPU-host call (H200) for the torch_memory section (docs/torch-memory.md) and for the
# shim changes of 2026-11-29's last commits that had not run on a GPU yet.
#   1. torch_memory on real PyTorch: gpu/torch_fragmentation.py frag and oom (8 GiB cap), with
#      the default allocator and with expandable_segments:True; the shim reads torch's counters by
#      itself and gpu/check_torch_memory.py compares them with what the script read.
#   2. What enforcement costs a training step: hooked memory calls (each one admitted against the
#      cap) in a run of WARMUP+30 steps and one of WARMUP+130, transformer and CNN, cap set and
#      call sites off: the difference over 100 steps is the enforcement work per step.
#   3. gpu/run_py_sites.sh: torch findings name the user's line with the 3.12 frame reader.
#   4. gpu/run_live.sh section 1: the live inventory of a torch + Triton job (the fork-safe walk
#      of loaded objects and the watcher that walks only after dlopen/dlclose).
#   5. (two GPUs, kind nvidia-h200-x2) torch_memory with torch on both devices, one row each
#      against that device's ledger; and with CUDA_VISIBLE_DEVICES=1, where torch's device 0 is
#      the second GPU: torch's index and the ordinal the driver gives the process agree.
# Needs .carry/gpu from bench/perf_prebuild.sh. Run:
#   run(command="bash gpu/run_torch_memory.sh", carry=[".carry/gpu"], timeout_s=540)
# SECTIONS="1 2 3 4 5" (default) picks the sections.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTD=${OUT:-gpu-results}
mkdir -p "$OUTD"
SHIM=$PWD/.carry/gpu/shim/libcudashim.so
R=$OUTD/results.md
W=$(mktemp -d)
SECTIONS=${SECTIONS:-1 2 3 4 5}
want() { [[ " $SECTIONS " == *" $1 "* ]]; }
{
  echo "# torch_memory, enforcement work per step, Python sites, live inventory (H200)"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- GPU, driver: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  echo "- torch, python: $(python3 -c 'import torch, sys; print(torch.__version__, sys.version.split()[0])')"
  echo "- shim built from: $(cat .carry/gpu/perf-commit.txt 2>/dev/null || echo unknown)"
  echo "- command: \`SECTIONS=\"$SECTIONS\" bash gpu/run_torch_memory.sh\`"
} > "$R"

if want 1; then
{ echo; echo "## 1. torch_memory on real PyTorch (gpu/torch_fragmentation.py)"; echo; } >> "$R"
for conf in default expandable; do
  for mode in frag oom; do
    d=$W/$mode-$conf
    mkdir -p "$d"
    alloc_conf=""; [ "$conf" = expandable ] && alloc_conf="expandable_segments:True"
    cap=""; [ "$mode" = oom ] && cap="8GiB"
    PYTORCH_CUDA_ALLOC_CONF=$alloc_conf CUDASHIM_MEM_CAP=$cap LD_PRELOAD=$SHIM CUDASHIM_OUT=$d \
      CUDASHIM_LOG_LEVEL=warn timeout 120 python3 gpu/torch_fragmentation.py "$mode" > "$d/stdout.txt" 2> "$d/stderr.txt"
    echo "$mode-$conf: exit $? ($(grep -c . "$d/stderr.txt") stderr lines)"
  done
done
python3 gpu/check_torch_memory.py "$R" "$W"/frag-default "$W"/frag-expandable "$W"/oom-default "$W"/oom-expandable
echo "check_torch_memory exit $?"
{ echo; echo "The shim's stderr in the oom cases (its OOM line and findings):"; echo; echo '```'
  for c in oom-default oom-expandable; do echo "[$c]"; cut -c1-600 "$W/$c/stderr.txt" | grep -v "^\s*$" | head -12; done
  echo '```'; echo; echo "torch's own OutOfMemoryError message:"; echo
  for c in oom-default oom-expandable; do python3 -c "import json,sys; d=json.loads([l for l in open(sys.argv[1]) if l.startswith('{')][-1]); print('- $c:', d.get('oom_message','(none)'))" "$W/$c/stdout.txt"; done
} >> "$R"
fi

if want 2; then
echo "== 2. enforcement work per step"
{ echo; echo "## 2. Enforcement work per training step (cap 100GiB, call sites off)"; echo; } >> "$R"
for model in transformer cnn; do
  for steps in 30 130; do
    d=$W/enf-$model-$steps
    mkdir -p "$d"
    CUDASHIM_SITES=0 CUDASHIM_MEM_CAP=100GiB LD_PRELOAD=$SHIM CUDASHIM_OUT=$d CUDASHIM_LOG_LEVEL=error WARMUP=20 \
      timeout 120 python3 bench/gpu_train_step.py "$model" "$steps" > "$d/stdout.txt" 2> "$d/stderr.txt"
    echo "$model $steps: exit $? $(tail -1 "$d/stdout.txt")"
  done
done
python3 - "$W" >> "$R" <<'PY'
import glob, json, sys
w = sys.argv[1]
print("| model | memory ABI | calls in 50 steps | calls in 150 steps | per step after warm-up |")
print("|---|---|---|---|---|")
for model in ("transformer", "cnn"):
    reps = {}
    for steps in (30, 130):
        f = glob.glob(f"{w}/enf-{model}-{steps}/cudashim-*.json")
        reps[steps] = json.load(open(f[0]))["api"] if f else {}
    names = sorted({n for r in reps.values() for n, row in r.items() if row.get("family") == "memory"})
    for n in names:
        a, b = reps[30].get(n, {}).get("calls", 0), reps[130].get(n, {}).get("calls", 0)
        print(f"| {model} | {n} | {a} | {b} | {(b - a) / 100:.2f} |")
    if not names:
        print(f"| {model} | (no report) | | | |")
PY
tail -20 "$R"
fi

if want 3; then
echo "== 3. Python sites"
{ echo; echo "## 3. Torch findings name the user's line (gpu/run_py_sites.sh)"; echo; echo '```'; } >> "$R"
timeout 150 bash gpu/run_py_sites.sh 2>&1 | tee -a "$R"
echo '```' >> "$R"
fi

if want 4; then
echo "== 4. live inventory"
{ echo; echo "## 4. Live inventory of torch + Triton (gpu/run_live.sh section 1)"; echo; } >> "$R"
SECTIONS=1 OUT=$OUTD/live timeout 200 bash gpu/run_live.sh > "$OUTD/live.log" 2>&1
echo "run_live exit $?" | tee -a "$R"
cat "$OUTD/live/results-live.md" >> "$R" 2>/dev/null
fi
if want 5; then
echo "== 5. two GPUs"
{ echo; echo "## 5. Two GPUs"; echo; } >> "$R"
if [ "$(nvidia-smi -L | grep -c GPU)" -lt 2 ]; then
  echo "fewer than two GPUs: skipped" | tee -a "$R"
else
  for c in two-default visible1-default; do
    d=$W/$c
    mkdir -p "$d"
    if [ "$c" = two-default ]; then vis=0,1; mode=two; else vis=1; mode=frag; fi
    CUDA_VISIBLE_DEVICES=$vis LD_PRELOAD=$SHIM CUDASHIM_OUT=$d CUDASHIM_LOG_LEVEL=warn \
      timeout 120 python3 gpu/torch_fragmentation.py "$mode" > "$d/stdout.txt" 2> "$d/stderr.txt"
    echo "$c: exit $?"
  done
  python3 gpu/check_torch_memory.py "$R" "$W"/two-default "$W"/visible1-default
  echo "check_torch_memory exit $?"
fi
fi
tar czf "$OUTD/reports.tar.gz" -C "$W" . 2>/dev/null
cat "$R"
