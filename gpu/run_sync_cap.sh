#!/usr/bin/env bash
# run_sync_cap.sh: the GPU-host proof of the synchronization findings and of the
# allocator policy, run after gpu/run_gpu.sh in the same device call.
#   sync: each gpu/sync_patterns/*.py under the shim (findings, Python line, blocked
#         time) and without it under torch.cuda.set_sync_debug_mode("warn")
#   cap:  PyTorch under an 8 GiB cap (OOM, mem_get_info), with and without
#         expandable_segments; a cudaMallocAsync program under the same cap
# Writes $OUT/results-sync.md, $OUT/results-cap.md and $OUT/reports-sync-cap.tar.gz.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RESULTS=${OUT:-$ROOT/gpu-results}
mkdir -p "$RESULTS"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cudashim-sync.XXXXXX")
SHIM=$ROOT/build/lib/libcudashim.so
[ -f "$SHIM" ] || SHIM=$ROOT/.carry/gpu/shim/libcudashim.so
export PYTHONUNBUFFERED=1
python3 gpu/check_sync_cap.py --shim "$SHIM" --work "$WORK" --results "$RESULTS" --bin "$ROOT/.carry/gpu/bin"
rc=$?
tar -C "$WORK" -czf "$RESULTS/reports-sync-cap.tar.gz" . 2>/dev/null
exit $rc
