#!/usr/bin/env bash
# compare_gpu_sampling.sh BUILD_DIR [processes per side]: the hook-overhead benchmark with the GPU
# sampler on (CUDASHIM_GPU_SAMPLING=1, the default: NVML read once a second on the flush thread, here
# the NVML double) and off, the same binaries, in alternating processes (on off, off on, ...), and the
# median "added ns" per row of each side. The sampler never runs on a hook's path: the two should
# agree within the run-to-run spread. Prints a Markdown table; informs only.
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [N]}" && pwd)
N=${2:-6}
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for i in $(seq 1 "$N"); do
  for s in $([ $((i % 2)) = 1 ] && echo "1 0" || echo "0 1"); do
    d=$(mktemp -d)
    out=$(CUDASHIM_GPU_SAMPLING=$s CUDASHIM_LOG_LEVEL=error LD_PRELOAD="$BUILD/lib/libcudashim.so" \
      LD_LIBRARY_PATH="$BUILD/fakecuda" CUDASHIM_OUT="$d" "$BUILD/bin/bench_hook_overhead" --rounds 101 --calls 2000 2>/dev/null)
    mode=$(python3 -c "import json,glob,sys;print(json.load(open(glob.glob(sys.argv[1]+'/*.json')[0]))['gpu_time']['sampling']['mode'])" "$d")
    echo "$out" | awk -v s="$s" -v m="$mode" -F'|' \
      '/^\| (pass-through launch|timed sync|alloc\+free pair, ledger) \|/ && NF>8 {gsub(/ /,"",$6); print s "\t" m "\t" $2 "\t" $6}' >>"$raw"
    rm -rf "$d"
  done
done
python3 - "$raw" "$N" <<'PY'
import collections, statistics, sys
rows, modes = collections.defaultdict(list), collections.Counter()
for line in open(sys.argv[1]):
    s, m, op, added = line.rstrip("\n").split("\t")
    rows[(op.strip(), s)].append(float(added))
    modes[(s, m)] += 1
print(f"{sys.argv[2]} processes per side; sampler mode seen in the reports: {dict(modes)} (rows x processes)\n")
print("| row | sampling off: added ns (median) | sampling on: added ns (median) | on/off | off min-max | on min-max |")
print("|---|---:|---:|---:|---:|---:|")
for op in ["pass-through launch", "timed sync", "alloc+free pair, ledger"]:
    off, on = rows[(op, "0")], rows[(op, "1")]
    print(f"| {op} | {statistics.median(off):.1f} | {statistics.median(on):.1f} | "
          f"{statistics.median(on) / statistics.median(off):.3f} | {min(off):.1f}-{max(off):.1f} | {min(on):.1f}-{max(on):.1f} |")
PY
