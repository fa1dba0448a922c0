#!/usr/bin/env bash
# run_live.sh: one GPU-host call (H200) for what only real CUDA can show:
#   1. the live inventory and module log of a torch 2.11 job that compiles a kernel
#      through Triton (gpu/live_torch.py, judged by gpu/check_live.py): no false error,
#      every library with version and how it came in, Triton's kernel load with its time;
#   2. `cudashim doctor` over the real site-packages (torch, the nvidia wheels, Triton's
#      toolchain, the driver bridge) and its scan speed against cuobjdump run per file
#      (bench/doctor_scan.sh);
#   3. training-step overhead, enforcement only and in full, paired rounds
#      (bench/gpu_overhead.py with ROUNDS/STEPS/CONFIGS).
# Needs the prebuilt shim and CLI in .carry/gpu/shim (gpu/prebuild.sh). Writes into $OUT.
# SECTIONS="1 2 3" (default) picks the sections to run.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTD=${OUT:-gpu-results}
mkdir -p "$OUTD"
SHIM=$PWD/.carry/gpu/shim/libcudashim.so
CLI=$PWD/.carry/gpu/shim/cudashim
SITE=$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
{
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- GPU, driver: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  echo "- kernel module: $(head -1 /proc/driver/nvidia/version)"
  echo "- torch, triton, python: $(python3 -c 'import torch, triton, sys; print(torch.__version__, triton.__version__, sys.version.split()[0])')"
  echo "- libcuda: $(readlink -f "$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}')")"
} > "$OUTD/env.md"
cat "$OUTD/env.md"

SECTIONS=${SECTIONS:-1 2 3}
want() { [[ " $SECTIONS " == *" $1 "* ]]; }
if want 1; then
echo "== 1. live inventory: torch + Triton"
rm -rf /tmp/live /tmp/live-triton
export TRITON_CACHE_DIR=/tmp/live-triton   # empty: Triton compiles and loads its kernel in this run
"$CLI" run --out /tmp/live -- python3 gpu/live_torch.py > "$OUTD/live-run.txt" 2>&1
echo "exit $?" >> "$OUTD/live-run.txt"
tail -25 "$OUTD/live-run.txt"
{ echo "# Live inventory and module log of a torch + Triton job (H200)"; echo; cat "$OUTD/env.md"
  echo "- command: \`bash gpu/run_live.sh\` (section 1: cudashim run -- python3 gpu/live_torch.py)"; echo; } > "$OUTD/results-live.md"
python3 gpu/check_live.py /tmp/live "$OUTD/results-live.md"
echo "live verdict exit $?"
tar czf "$OUTD/live-reports.tar.gz" -C /tmp live 2>/dev/null
fi

if want 2; then
echo "== 2. doctor on the real install"
timeout 120 "$CLI" doctor --sm 90 "$SITE" > "$OUTD/doctor-site.txt" 2>&1
echo "doctor site-packages exit $?" | tee -a "$OUTD/doctor-site.txt"
sed -n '1,60p' "$OUTD/doctor-site.txt"
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
REPEATS=1 timeout 150 bash bench/doctor_scan.sh --cli "$CLI" --cuobjdump "$CUOBJ" "$SITE/torch/lib" "$SITE/nvidia" > "$OUTD/doctor-scan.txt" 2>&1
echo "doctor_scan exit $?" | tee -a "$OUTD/doctor-scan.txt"
cat "$OUTD/doctor-scan.txt"
fi

if want 3; then
echo "== 3. training-step overhead"
ROUNDS=${ROUNDS:-6} STEPS=${STEPS:-60} CONFIGS=${CONFIGS:-baseline,enforce,full} SKIP_EXTRAS=1 \
  timeout 330 python3 bench/gpu_overhead.py "$SHIM" "$OUTD" > "$OUTD/overhead-run.txt" 2>&1
echo "overhead exit $?"
cat "$OUTD/results-overhead.md" 2>/dev/null || tail -20 "$OUTD/overhead-run.txt"
fi
