#!/usr/bin/env bash
# run_gpu.sh: the GPU-host proof, in ONE call from the repository root (see gpu/README.md).
#
# Under LD_PRELOAD=libcudashim.so, each case runs a known workload, prints what it did
# as one JSON line, and gpu/check_gpu_report.py compares that with the shim's report:
#   1 cuda-static    nvcc program, static cudart (driver reached via dlopen + cuGetProcAddress)
#   2 cuda-shared    the same, shared libcudart.so.13 (runtime rows + driver rows)
#   3 driver-direct  driver-API program linked with -lcuda (exact expectations per ABI)
#   3 driver-procaddr  the same through dlsym(cuGetProcAddress_v2) + cuGetProcAddress
#   4 cuda-cu129     the nvcc program built against and run with the CUDA 12.9 runtime
#   5 torch          PyTorch training loop: report vs torch.cuda.memory_stats()
#   6 libtorch       the same loop in C++ (built here against the installed torch)
# plus the start-up cost of the shim on `import torch; torch.zeros(1, device='cuda')`.
# The shim is NOT rebuilt: build/lib/libcudashim.so (or .carry/gpu/shim/) is carried in.
# The test programs come prebuilt from .carry/gpu/bin (gpu/prebuild.sh); missing ones
# are built here with nvcc. Everything lands in $OUT: results.md (the table), rows.jsonl,
# run.log, reports.tar.gz (every report, stdout/stderr and check of every case).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PYTHONUNBUFFERED=1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cudashim-gpu.XXXXXX")
RESULTS=${OUT:-$WORK/out}  # $OUT: the folder the GPU run brings back
mkdir -p "$RESULTS" "$WORK/reports"
ROWS=$WORK/rows.jsonl
: > "$ROWS"
exec > >(tee "$RESULTS/run.log") 2>&1
TEE_PID=$!
T0=$SECONDS
say() { echo "[$((SECONDS - T0))s] $*"; }

# ---------------------------------------------------------------- the host
say "== host"
date -u +%Y-%m-%dT%H:%M:%SZ
. /etc/os-release 2>/dev/null && echo "os: $PRETTY_NAME, kernel $(uname -r), glibc $(ldd --version | head -1 | awk '{print $NF}')"
GPU=unknown DRIVER=unknown
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader
  GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
else
  echo "no nvidia-smi"
fi
NVCC=$(command -v nvcc || true)
for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-13.0/bin/nvcc; do [ -z "$NVCC" ] && [ -x "$c" ] && NVCC=$c; done
NVCC_VER=$([ -n "$NVCC" ] && "$NVCC" --version | grep -o 'release [0-9.]*, V[0-9.]*' || echo "no nvcc")
echo "nvcc: ${NVCC:-none} ($NVCC_VER)"
# One python start for every torch fact the script needs.
eval "$(python3 - <<'EOF' 2>/dev/null
import os, shlex
try:
    import torch
    d = os.path.dirname(torch.__file__)
    cu13 = os.path.join(os.path.dirname(d), "nvidia", "cu13", "lib")
    v = {"TORCH": torch.__version__, "TORCH_CUDA": str(torch.version.cuda),
         "TORCH_CUDNN": str(torch.backends.cudnn.version()), "TORCH_PREFIX": torch.utils.cmake_prefix_path,
         "TORCH_LIB": os.path.join(d, "lib"), "TORCH_CU13": cu13}
except Exception as e:
    v = {"TORCH": "not importable: %s" % e}
for k, x in v.items():
    print("%s=%s" % (k, shlex.quote(x)))
EOF
)"
TORCH=${TORCH:-none} TORCH_PREFIX=${TORCH_PREFIX:-} TORCH_LIB=${TORCH_LIB:-} TORCH_CU13=${TORCH_CU13:-}
echo "python: $(python3 --version 2>&1), torch $TORCH (cuda ${TORCH_CUDA:-?}, cudnn ${TORCH_CUDNN:-?})"

# ---------------------------------------------------------------- the shim (carried, not rebuilt)
# SHIM and CLI from the environment win (gpu/run_wheel.sh: the pip-installed wheel's).
# CUDASHIM_RUNNER=cli runs each case through `$CLI run --out DIR -- CMD` instead of
# LD_PRELOAD=$SHIM (the CLI then finds its own library, as a user's would).
SHIM=${SHIM:-} CLI=${CLI:-} RUNNER=${CUDASHIM_RUNNER:-preload}
for d in build/lib .carry/gpu/shim; do [ -z "$SHIM" ] && [ -f "$d/libcudashim.so" ] && SHIM=$ROOT/$d/libcudashim.so; done
for d in build/bin .carry/gpu/shim; do [ -z "$CLI" ] && [ -x "$d/cudashim" ] && CLI=$ROOT/$d/cudashim; done
if [ -z "$SHIM" ]; then
  say "FATAL: no libcudashim.so in build/lib or .carry/gpu/shim: carry build/lib/libcudashim.so"
  exit 1
fi
SHIM_SHA=$(sha256sum "$SHIM" | cut -c1-12)
echo "shim: $SHIM (sha256 $SHIM_SHA), needs: $(readelf -d "$SHIM" | grep NEEDED | grep -o '\[.*\]' | tr '\n' ' ')"
echo "cli: ${CLI:-none} $([ -n "$CLI" ] && "$CLI" --version); cases run through: $RUNNER"

# ---------------------------------------------------------------- libtorch_loop: build in the background
LT_PID=""
if [ -n "$TORCH_PREFIX" ] && command -v cmake >/dev/null; then
  say "building gpu/libtorch_loop in the background (log in reports.tar.gz)"
  (TORCH_CUDA_ARCH_LIST=9.0 timeout -k 5 150 cmake -S gpu/libtorch_loop -B "$WORK/libtorch_build" \
     -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" -DCMAKE_BUILD_TYPE=Release &&
   timeout -k 5 150 cmake --build "$WORK/libtorch_build" -j"$(nproc)") > "$WORK/reports/libtorch_build.log" 2>&1 &
  LT_PID=$!
fi

# ---------------------------------------------------------------- the test programs
CARRY=$ROOT/.carry/gpu
need_build=0
for p in cuda_counts_static cuda_counts_shared cuda_counts_cu129 driver_counts; do
  [ -x "$CARRY/bin/$p" ] || need_build=1
done
if [ "$need_build" = 1 ]; then
  say "some programs are not in .carry/gpu/bin: building them here (gpu/prebuild.sh)"
  NVCC=$NVCC bash gpu/prebuild.sh "$WORK/carry" 2>&1 | tail -5
else
  echo "programs: prebuilt in .carry/gpu ($(head -1 "$CARRY/BUILD-INFO.txt" 2>/dev/null))"
fi
prog() {  # the path of a test program: carried first, built here second
  for d in "$CARRY/bin" "$WORK/carry/bin"; do [ -x "$d/$1" ] && { echo "$d/$1"; return; }; done
  echo "$WORK/missing/$1"
}
first_dir_with() {  # FILE DIR...: the first DIR holding FILE
  local f=$1; shift
  for d in "$@"; do [ -n "$d" ] && [ -f "$d/$f" ] && { echo "$d"; return; }; done
}
CUDA_HOME=$([ -n "$NVCC" ] && dirname "$(dirname "$(readlink -f "$NVCC")")")
CUDART13_DIR=$(first_dir_with libcudart.so.13 "${CUDA_HOME:-}/lib64" "${CUDA_HOME:-}/targets/x86_64-linux/lib" \
  /usr/local/cuda/lib64 "$TORCH_CU13")
CUDART12_DIR=$(first_dir_with libcudart.so.12 "$CARRY/cu129/lib" "$WORK/carry/cu129/lib" \
  "$ROOT/.deps/cu129/nvidia/cuda_runtime/lib")
echo "libcudart.so.13 from: ${CUDART13_DIR:-not found}; libcudart.so.12 from: ${CUDART12_DIR:-not found}"
for p in cuda_counts_static cuda_counts_shared cuda_counts_cu129 driver_counts; do
  echo "  $(prog $p): $(nm -D "$(prog $p)" 2>/dev/null | grep -E ' U (__)?cuda(Launch|Malloc)\w*@' | awk '{print $2}' | tr '\n' ' ')"
done

# ---------------------------------------------------------------- the cases
# run_case NAME "WHAT RAN" TIMEOUT WANT_CUDART BASELINE(0|1) [VAR=VALUE...] -- CMD...
run_case() {
  local name=$1 ran=$2 tmo=$3 want=$4 baseline=$5
  shift 5
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local dir=$WORK/reports/$name base_rc=- rc t
  mkdir -p "$dir"
  if [ $((SECONDS - T0)) -gt 400 ]; then  # keep the whole run inside the device call's limit
    add_row "$name" "$ran" FAIL "skipped: the run had used $((SECONDS - T0)) s already"
    return
  fi
  say "== $name: $*"
  if [ "$baseline" = 1 ]; then
    env "${envs[@]}" timeout -k 5 "$tmo" "$@" > "$dir/baseline.stdout" 2> "$dir/baseline.stderr"
    base_rc=$?
  fi
  t=$SECONDS
  if [ "$RUNNER" = cli ]; then
    env "${envs[@]}" timeout -k 5 "$tmo" "$CLI" run --out "$dir" -- "$@" > "$dir/stdout.txt" 2> "$dir/stderr.txt"
  else
    env "${envs[@]}" LD_PRELOAD="$SHIM" CUDASHIM_OUT="$dir" timeout -k 5 "$tmo" "$@" > "$dir/stdout.txt" 2> "$dir/stderr.txt"
  fi
  rc=$?
  say "$name: exit $rc in $((SECONDS - t)) s under the shim (without it: exit $base_rc)"
  [ -s "$dir/stderr.txt" ] && tail -8 "$dir/stderr.txt" | cut -c1-300 | sed 's/^/   stderr: /'
  python3 gpu/check_gpu_report.py --case "$name" --ran "$ran" --stdout "$dir/stdout.txt" --reports "$dir" \
    --rc "$rc" --baseline-rc "$base_rc" --want-cudart "$want" --cudashim "${CLI:-none}" --rows "$ROWS" \
    > "$dir/check.txt" 2>&1
  cut -c1-600 "$dir/check.txt"
}
add_row() {  # NAME "WHAT RAN" VERDICT WHY: a row for a case that could not run
  python3 -c 'import json,sys; print(json.dumps({"case": sys.argv[1], "ran": sys.argv[2], "expected": "-", "observed": "-", "verdict": sys.argv[3], "why": [sys.argv[4]], "notes": []}))' \
    "$@" >> "$ROWS"
}

WL="50x(malloc 1 MiB, H2D, <<<>>>, D2H, sync, free) + 20x(mallocAsync, cudaLaunchKernel, freeAsync) + pinned pair + 3 MiB kept"
run_case cuda-static "nvcc 13.0 -arch=sm_90, static cudart: $WL" 45 static 1 -- "$(prog cuda_counts_static)" 50 20
run_case cuda-shared "nvcc 13.0 -cudart shared, libcudart.so.13: $WL" 45 libcudart.so.13 1 \
  LD_LIBRARY_PATH="${CUDART13_DIR}" -- "$(prog cuda_counts_shared)" 50 20
run_case driver-direct "driver API linked with -lcuda: PTX module, 50x(alloc, HtoD, launch, sync, DtoH, free) + 25x(allocAsync, HtoDAsync, launch, freeAsync) + pinned pair + 3 MiB kept" \
  45 "" 1 -- "$(prog driver_counts)" direct 50
run_case driver-procaddr "the same, every entry point via dlsym(cuGetProcAddress_v2) + cuGetProcAddress(v12000)" \
  45 "" 1 -- "$(prog driver_counts)" procaddr 50
if [ -n "$CUDART12_DIR" ]; then
  run_case cuda-cu129 "the same program compiled against the CUDA 12.9 runtime headers, linked to and run with its libcudart.so.12" \
    45 libcudart.so.12 1 LD_LIBRARY_PATH="$CUDART12_DIR" -- "$(prog cuda_counts_cu129)" 50 20
else
  add_row cuda-cu129 "CUDA 12.9 runtime" FAIL "no libcudart.so.12 carried (.carry/gpu/cu129/lib)"
fi
run_case torch "python3 gpu/torch_loop.py: MLP, AdamW, 200 steps batch 256, empty_cache, 200 steps batch 1024" \
  120 "" 0 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False -- python3 gpu/torch_loop.py 200

LT_BIN="" LT_HOW=""
if [ -n "$LT_PID" ]; then
  say "waiting for the libtorch_loop build"
  wait "$LT_PID"
  lt_rc=$?
  say "libtorch_loop build: exit $lt_rc"
  tail -3 "$WORK/reports/libtorch_build.log"
  if [ -x "$WORK/libtorch_build/libtorch_loop" ]; then
    LT_BIN=$WORK/libtorch_build/libtorch_loop LT_HOW="built here with cmake against torch $TORCH"
  else
    tail -25 "$WORK/reports/libtorch_build.log"
  fi
fi
if [ -z "$LT_BIN" ] && [ -x "$CARRY/bin/libtorch_loop" ]; then
  LT_BIN=$CARRY/bin/libtorch_loop LT_HOW="build failed here; prebuilt on the CPU machine against the torch 2.11.0+cu130 wheel"
fi
if [ -n "$LT_BIN" ] && [ -n "$TORCH_LIB" ]; then
  run_case libtorch "gpu/libtorch_loop ($LT_HOW): the same loop in C++" 120 "" 0 \
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False LD_LIBRARY_PATH="$TORCH_LIB" -- "$LT_BIN" 200
else
  add_row libtorch "gpu/libtorch_loop" FAIL "build failed (log in reports.tar.gz: libtorch_build.log)"
fi

# ---------------------------------------------------------------- start-up cost
STARTUP=""
if [ -n "$TORCH_PREFIX" ] && [ $((SECONDS - T0)) -lt 300 ]; then
  say "== start-up: python3 -c \"import torch; torch.zeros(1, device='cuda')\", 5 runs with and 5 without the shim, alternating"
  mkdir -p "$WORK/reports/startup"
  STARTUP=$(python3 - "$SHIM" "$WORK/reports/startup" <<'EOF'
import os, statistics, subprocess, sys, time, glob
shim, out = sys.argv[1], sys.argv[2]
cmd = [sys.executable, "-c", "import torch; torch.zeros(1, device='cuda')"]
def run(with_shim):
    env = dict(os.environ)
    if with_shim:
        env["LD_PRELOAD"] = shim
        env["CUDASHIM_OUT"] = out
    t = time.monotonic()
    try:
        rc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30).returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    return time.monotonic() - t, rc
run(False)  # warm the file cache
times = {True: [], False: []}
rcs = []
for i in range(5):
    for w in ((False, True) if i % 2 == 0 else (True, False)):
        dt, rc = run(w)
        times[w].append(dt)
        rcs.append(rc)
    if "timeout" in rcs:
        break
a, b = statistics.median(times[False]), statistics.median(times[True])
n = len(glob.glob(os.path.join(out, "cudashim-*.json")))
print(f"median {a:.3f} s without the shim, {b:.3f} s with it: {b - a:+.3f} s ({(b / a - 1) * 100:+.1f}%); "
      f"runs without {[round(x, 3) for x in times[False]]}, with {[round(x, 3) for x in times[True]]}; "
      f"exit codes {sorted(set(map(str, rcs)))}; {n} reports written by the shimmed runs")
EOF
)
  echo "$STARTUP"
fi

# ---------------------------------------------------------------- the results
TABLE=$RESULTS/results.md
{
  echo "# cudashim on the GPU host"
  echo
  echo "- date: $(date -u +%Y-%m-%d) ($(date -u +%H:%MZ)), run time $((SECONDS - T0)) s"
  echo "- GPU: $GPU, driver $DRIVER; nvcc: $NVCC_VER"
  echo "- torch $TORCH (CUDA ${TORCH_CUDA:-?}, cuDNN ${TORCH_CUDNN:-?}); $(python3 --version 2>&1); ${PRETTY_NAME:-}"
  echo "- shim: ${SHIM#$ROOT/} (sha256 $SHIM_SHA); programs: $([ "$need_build" = 1 ] && echo "built on this host" || echo "prebuilt, $(head -1 "$CARRY/BUILD-INFO.txt" 2>/dev/null)")"
  echo
  python3 gpu/check_gpu_report.py --table "$ROWS"
  echo
  [ -n "$STARTUP" ] && echo "Start-up of \`python3 -c \"import torch; torch.zeros(1, device='cuda')\"\`: $STARTUP"
  echo
  echo "Verdicts: PASS = every count exact; EXPLAINED = differs only by what the report itself accounts for (see the row);"
  echo "details of every case (notes, reports) in run.log and reports.tar.gz."
} > "$TABLE"
cp "$ROWS" "$RESULTS/rows.jsonl"
cp "$CARRY/BUILD-INFO.txt" "$WORK/reports/" 2>/dev/null
tar -C "$WORK" -czf "$RESULTS/reports.tar.gz" reports
say "== results ($RESULTS)"
cat "$TABLE"
npass=$(grep -c '"verdict": "PASS"\|"verdict": "EXPLAINED"' "$ROWS")
ntotal=$(grep -c . "$ROWS")
echo "$npass passed, $((ntotal - npass)) failed"
rm -rf "$WORK/libtorch_build"
exec 1>&- 2>&-
wait "$TEE_PID" 2>/dev/null
[ "$npass" = "$ntotal" ]
