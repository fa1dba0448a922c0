#!/usr/bin/env bash
# run_doctor.sh: `cudashim doctor` over the host's real torch installation (torch/lib
# and the nvidia wheels), timed against `cuobjdump --list-elf` over the same files,
# in one run. Writes $OUT/results-doctor.md and $OUT/doctor.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTD=${OUT:-gpu-results}
mkdir -p "$OUTD"
CLI=$PWD/build/bin/cudashim
[ -x "$CLI" ] || CLI=$PWD/.carry/gpu/shim/cudashim
SITE=$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
mapfile -t FILES < <(find "$SITE/torch/lib" "$SITE/nvidia" -name '*.so*' -type f 2>/dev/null | sort)
BYTES=$(du -cb "${FILES[@]}" | tail -1 | cut -f1)
t0=$(date +%s.%N)
"$CLI" doctor --sm 90 "$SITE/torch/lib" "$SITE/nvidia" > "$OUTD/doctor.txt" 2>&1
rc=$?
t1=$(date +%s.%N)
"$CLI" doctor --json --sm 90 "$SITE/torch/lib" "$SITE/nvidia" > "$OUTD/doctor.json" 2>/dev/null
CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
t2=$(date +%s.%N)
timeout 240 "$CUOBJDUMP" --list-elf "${FILES[@]}" > /dev/null 2>&1
crc=$?
t3=$(date +%s.%N)
python3 - "$OUTD" "$rc" "$crc" "$t0" "$t1" "$t2" "$t3" "${#FILES[@]}" "$BYTES" "$SITE" <<'PY'
import json, sys, os
out, rc, crc, t0, t1, t2, t3, n, nbytes, site = sys.argv[1:]
d, c = float(t1) - float(t0), float(t3) - float(t2)
try:
    j = json.load(open(os.path.join(out, "doctor.json")))
    fs = j.get("findings", [])
except Exception as e:
    j, fs = {}, []
sev = {}
for f in fs:
    sev[f.get("severity")] = sev.get(f.get("severity"), 0) + 1
lines = ["# cudashim doctor on the GPU host's torch installation", "",
         f"- files: {n} shared libraries, {int(nbytes) / 2**30:.2f} GiB, under {site}/torch/lib and {site}/nvidia",
         f"- `cudashim doctor --sm 90`: {d:.2f} s, exit {rc} (0 clean, 1 warnings, 2 errors); findings by severity: {sev}",
         f"- `cuobjdump --list-elf` over the same files: {c:.2f} s, exit {crc}{' (stopped at 240 s)' if crc == 124 else ''}",
         f"- ratio: doctor is {c / d:.1f}x faster" if d > 0 else "- ratio: n/a",
         "- command: `bash gpu/run_doctor.sh` (full text output in doctor.txt)", "", "Findings:"]
for f in fs[:40]:
    lines.append(f"- [{f.get('severity')}] {f.get('id')}: {str(f.get('message', f.get('title', '')))[:220]}")
open(os.path.join(out, "results-doctor.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
