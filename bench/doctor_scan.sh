#!/usr/bin/env bash
# bench/doctor_scan.sh [--cli PATH] [--cuobjdump PATH] DIR...
# Times `cudashim doctor` over DIR... (folders or a site-packages) against `cuobjdump --list-elf`
# run once per ELF file over the same files (the ones doctor examined, from its --json report).
# cuobjdump takes one file at a time and fails on a file without a fatbin: such files are
# counted and the run goes on. Median of 3 runs each; prints both and the ratio.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=$root/build/bin/cudashim
cuobjdump=${CUOBJDUMP:-$root/.deps/realbin/cuobjdump/nvidia/cu13/bin/cuobjdump}
while [ $# -gt 0 ]; do
  case $1 in
    --cli) cli=$2; shift 2 ;;
    --cuobjdump) cuobjdump=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--cli PATH] [--cuobjdump PATH] DIR..." >&2; exit 2; }
[ -x "$cli" ] || { echo "$cli: not built (or pass --cli)" >&2; exit 2; }
[ -x "$cuobjdump" ] || { echo "$cuobjdump: no cuobjdump (run scripts/setup.sh, or pass --cuobjdump)" >&2; exit 2; }

list=$(mktemp); trap 'rm -f "$list"' EXIT
"$cli" doctor --json --sm 90 "$@" 2>/dev/null | python3 -c '
import json, sys
for lib in json.load(sys.stdin)["libraries"]:
    print(lib["path"])' > "$list" || true
files=$(wc -l < "$list")
bytes=$(tr '\n' '\0' < "$list" | xargs -0 stat -L -c %s | awk '{s += $1} END {printf "%.2f", s / 2^30}')

now() { date +%s.%N; }
median() { python3 -c "import sys, statistics; print(statistics.median(float(x) for x in sys.stdin.read().split()))"; }
sub() { python3 -c "print($1 - $2)"; }
repeats=${REPEATS:-3}
doctor_times=() cuobj_times=()
for run in $(seq "$repeats"); do
  t0=$(now); "$cli" doctor --sm 90 "$@" >/dev/null 2>&1 || true; t1=$(now)
  doctor_times+=("$(sub "$t1" "$t0")")
  nofatbin=0
  t0=$(now)
  while IFS= read -r f; do "$cuobjdump" --list-elf "$f" >/dev/null 2>&1 || nofatbin=$((nofatbin + 1)); done < "$list"
  t1=$(now)
  cuobj_times+=("$(sub "$t1" "$t0")")
done
d=$(printf '%s\n' "${doctor_times[@]}" | median)
c=$(printf '%s\n' "${cuobj_times[@]}" | median)
printf 'files: %s ELF files, %s GiB, in %s (%s without a fatbin: cuobjdump exits non-zero on them)\n' "$files" "$bytes" "$*" "$nofatbin"
printf '%-40s %10s\n' "command (median of $repeats)" "seconds"
printf '%-40s %10.2f\n' "cudashim doctor (all files, one run)" "$d"
printf '%-40s %10.2f\n' "cuobjdump --list-elf (once per file)" "$c"
printf 'ratio: doctor is %.1fx faster\n' "$(python3 -c "print($c / $d)")"
