#!/usr/bin/env bash
# run_final.sh: the session's last GPU call, on the 2-GPU host: torchrun DDP across both
# GPUs under cudashim (gpu/run_ddp.sh: per-rank reports, per-rank caps driven to OOM,
# NCCL's version from its API, the planted extra libcudart named), then the live
# inventory of a torch + Triton job with the final shim (gpu/run_live.sh section 1).
set -uo pipefail
cd "$(dirname "$0")/.."
OUTD=${OUT:-gpu-results}; mkdir -p "$OUTD"
bash gpu/run_ddp.sh
echo "run_ddp exit $?"
SECTIONS=1 bash gpu/run_live.sh
echo "run_live exit $?"
