#!/usr/bin/env bash
# run_nvml.sh: NVML's memory queries on the real GPU, without the shim and under
# CUDASHIM_MEM_CAP=8GiB (gpu/nvml_cap.py). Writes $OUT/results-nvml.md.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTD=${OUT:-gpu-results}; mkdir -p "$OUTD"
SHIM=$PWD/.carry/gpu/shim/libcudashim.so
{
  echo "# NVML's memory queries under a cap ($(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), torch $(python3 -c 'import torch; print(torch.__version__)'))"
  echo; echo "- command: \`bash gpu/run_nvml.sh\`"; echo
  echo "without the shim:"; echo '```'; python3 gpu/nvml_cap.py 2>&1 | tail -3; echo '```'
  echo "with the shim, CUDASHIM_MEM_CAP=8GiB:"; echo '```'
  LD_PRELOAD=$SHIM CUDASHIM_MEM_CAP=8GiB CUDASHIM_OUT=$(mktemp -d) CUDASHIM_LOG_LEVEL=error python3 gpu/nvml_cap.py 2>&1 | tail -3; echo '```'
} > "$OUTD/results-nvml.md"
cat "$OUTD/results-nvml.md"
