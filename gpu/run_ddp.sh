#!/usr/bin/env bash
# run_ddp.sh: torchrun across the GPUs of one host under `cudashim run`, DDP over
# NCCL, a per-rank cap of 20 GiB, and one planted divergence: rank 1 finds another
# copy of libcudart.so.13 first on LD_LIBRARY_PATH. Writes $OUT/results-ddp.md.
# NVLink multicast stays off (KINDS.md): NCCL_NVLS_ENABLE=0 and friends.
set -uo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 NO_COLOR=1
OUTD=${OUT:-gpu-results}; mkdir -p "$OUTD"
CLI=$PWD/.carry/gpu/shim/cudashim
export CUDASHIM_LIB=$PWD/.carry/gpu/shim/libcudashim.so CUDASHIM_MEM_CAP=20GiB
N=$(nvidia-smi -L | wc -l)
SITE=$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
OTHER=$(mktemp -d); cp "$SITE/nvidia/cu13/lib/libcudart.so.13" "$OTHER/"
cat > "$OTHER/rank_env.sh" <<EOS
#!/bin/sh
if [ "\$RANK" = 1 ]; then export LD_PRELOAD=\${LD_PRELOAD:-}:$OTHER/libcudart.so.13; fi
exec python3 $PWD/gpu/ddp_train.py
EOS
W=$(mktemp -d)
timeout 150 "$CLI" run --out "$W/run" -- torchrun --nproc-per-node="$N" --no-python sh "$OTHER/rank_env.sh" > "$W/run.log" 2>&1
rc=$?
"$CLI" report "$W/run" > "$OUTD/ddp-report.txt" 2>&1
{
  echo "# torchrun on $N GPUs under cudashim ($(date -u +%Y-%m-%d), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1))"
  echo; echo "- command: \`bash gpu/run_ddp.sh\`; torchrun exit $rc; CUDASHIM_MEM_CAP=20GiB; rank 1 also preloads $OTHER/libcudart.so.13 (torch loads its own libcudart by full path, so LD_LIBRARY_PATH cannot divert it)"
  echo; echo "## What the ranks printed"; echo '```'; grep '^{' "$W/run.log"; echo '```'
  echo; echo "## \`cudashim report\`"; echo '```'; cat "$OUTD/ddp-report.txt"; echo '```'
  echo; echo "## NCCL in each rank's inventory"; echo '```'
  for f in "$W"/run/cudashim-*-r*.json; do python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('rank', r['process']['rank'], [(l['file'], l['version'], l['version_source'], l['linkage'], l['how']) for l in r['libraries'] if l['family'] in ('nccl','cudart')], 'cap', r['policy']['cap_bytes_device0'], 'oom', r.get('oom', {}).get('count'))" "$f"; done
  echo '```'
} > "$OUTD/results-ddp.md"
tail -30 "$W/run.log" > "$OUTD/ddp-run-log.txt"
cat "$OUTD/results-ddp.md"
