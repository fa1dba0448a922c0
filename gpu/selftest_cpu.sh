#!/usr/bin/env bash
# selftest_cpu.sh: check the GPU-host programs and gpu/check_gpu_report.py on a machine
# without a GPU, against the test-double driver and runtime (tests/fakecuda), so that the
# one GPU run does not fail on plumbing. Needs the CPU build (build/) and nvcc 13.0.
#   - driver_counts direct / procaddr under the shim: the checker must say PASS;
#   - cuda_counts built with -cudart shared, on the fake libcudart.so.13 plus
#     gpu/selftest/fake_cudart_stubs.cpp (the nvcc stub entry points the fake lacks): PASS;
#   - the same expectations tampered with (one call more, one byte more live): FAIL;
#   - torch-style statistics synthesized from that report: PASS, EXPLAINED, FAIL.
# The static-cudart and CUDA 12.9 programs need a real driver (cuGetExportTable): GPU only.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SHIM=$ROOT/build/lib/libcudashim.so
FAKE=$ROOT/build/fakecuda
CHECK="python3 $ROOT/gpu/check_gpu_report.py --cudashim $ROOT/build/bin/cudashim"
T=$(mktemp -d /tmp/cudashim-gpu-selftest.XXXXXX)
pass=0 fail=0
expect() {  # WANT_VERDICT NAME CHECKER-ARGS...
  local want=$1 name=$2
  shift 2
  local out
  out=$($CHECK --case "$name" "$@" 2>&1)
  local got
  got=$(head -1 <<<"$out" | awk '{print $NF}')
  if [ "$got" = "$want" ]; then
    pass=$((pass + 1)); echo "ok   $name: $got"
  else
    fail=$((fail + 1)); echo "FAIL $name: got $got, wanted $want"; sed 's/^/     /' <<<"$out" | head -30
  fi
}

BIN=$ROOT/.carry/gpu/bin
if [ ! -x "$BIN/driver_counts" ] || [ ! -x "$BIN/cuda_counts_shared" ]; then
  bash gpu/prebuild.sh "$T/carry" >/dev/null 2>&1
  BIN=$T/carry/bin
fi
CUDA_INC=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")")/include
g++ -std=c++17 -O2 -fPIC -shared -I"$CUDA_INC" gpu/selftest/fake_cudart_stubs.cpp \
  -Wl,--version-script=gpu/selftest/fake_cudart_stubs.map -o "$T/libfake_cudart_stubs.so" -ldl || exit 1

for m in direct procaddr; do
  mkdir -p "$T/d_$m"
  DRIVER_COUNTS_NO_VERIFY=1 LD_LIBRARY_PATH=$FAKE LD_PRELOAD=$SHIM CUDASHIM_OUT=$T/d_$m \
    "$BIN/driver_counts" $m 6 > "$T/d_$m/stdout.txt"
  expect PASS "driver-$m" --stdout "$T/d_$m/stdout.txt" --reports "$T/d_$m"
done
sed 's/"cuLaunchKernel": \([0-9]*\)/"cuLaunchKernel": 1\1/' "$T/d_direct/stdout.txt" > "$T/d_direct/tampered.txt"
expect FAIL "driver-direct, one launch expected more" --stdout "$T/d_direct/tampered.txt" --reports "$T/d_direct"

mkdir -p "$T/s"
CUDA_COUNTS_NO_VERIFY=1 LD_LIBRARY_PATH=$FAKE LD_PRELOAD=$SHIM:$T/libfake_cudart_stubs.so CUDASHIM_OUT=$T/s \
  "$BIN/cuda_counts_shared" 7 4 > "$T/s/stdout.txt"
expect PASS "cuda-shared (fake runtime)" --stdout "$T/s/stdout.txt" --reports "$T/s" --want-cudart libcudart.so.13
expect FAIL "cuda-shared, wrong libcudart wanted" --stdout "$T/s/stdout.txt" --reports "$T/s" --want-cudart libcudart.so.12
sed 's/"cudaMalloc": \([0-9]*\)/"cudaMalloc": 1\1/' "$T/s/stdout.txt" > "$T/s/tampered1.txt"
expect FAIL "cuda-shared, one cudaMalloc more" --stdout "$T/s/tampered1.txt" --reports "$T/s"
sed 's/"live_bytes": \([0-9]*\)/"live_bytes": 1\1/' "$T/s/stdout.txt" > "$T/s/tampered2.txt"
expect FAIL "cuda-shared, live bytes differ" --stdout "$T/s/tampered2.txt" --reports "$T/s"
expect FAIL "cuda-shared, exit status 1" --stdout "$T/s/stdout.txt" --reports "$T/s" --rc 1

# torch-style statistics made from the cuda-shared report's own ledger.
python3 - "$T/s" <<'EOF'
import glob, json, os, sys
d = sys.argv[1]
exp = json.loads([l for l in open(os.path.join(d, "stdout.txt")) if l.startswith("{")][-1])
rep = json.load(open(glob.glob(os.path.join(d, "cudashim-*.json"))[0]))
dev = [x for x in rep["memory"]["devices"] if x["device"] == 0][0]["kinds"]["device"]
base = {"program": "torch_loop", "pid": exp["pid"], "torch": "selftest", "steps": 0, "loss": [],
        "memory_stats": {"segment.all.allocated": dev["allocs"], "segment.all.freed": dev["frees"],
                         "segment.all.current": dev["live_allocations"], "reserved_bytes.all.current": dev["live_bytes"],
                         "reserved_bytes.all.peak": dev["peak_bytes"]}}
def write(name, **upd):
    t = json.loads(json.dumps(base))
    t["memory_stats"].update(upd)
    open(os.path.join(d, name), "w").write(json.dumps(t) + "\n")
write("torch_pass.txt")
# torch made one segment more than the shim saw: the shim missed one, a FAIL ...
write("torch_fewer_seen.txt", **{"segment.all.allocated": dev["allocs"] + 1})
EOF
expect PASS "torch stats = ledger" --stdout "$T/s/torch_pass.txt" --reports "$T/s"
expect FAIL "torch made more segments than the shim saw" --stdout "$T/s/torch_fewer_seen.txt" --reports "$T/s"
# ... and an EXPLAINED case: torch saw one segment fewer than cudaMalloc calls and ledger
# (an allocation outside torch's allocator through the shared cudart), with its bytes.
python3 - "$T/s" <<'EOF'
import json, os, sys
d = sys.argv[1]
t = json.load(open(os.path.join(d, "torch_pass.txt")))
m = t["memory_stats"]
m["segment.all.allocated"] -= 1
m["segment.all.freed"] -= 1  # the freed one was the outside allocation: live bytes unchanged
open(os.path.join(d, "torch_explained.txt"), "w").write(json.dumps(t) + "\n")
EOF
expect EXPLAINED "torch: one allocation outside the caching allocator" --stdout "$T/s/torch_explained.txt" --reports "$T/s"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && rm -rf "$T"
[ "$fail" = 0 ]
