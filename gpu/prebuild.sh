#!/usr/bin/env bash
# prebuild.sh: build the GPU-host test programs on a CPU machine (compiling needs no GPU),
# into a folder the lead carries to the GPU host (default .carry/gpu, git-ignored).
#   bin/cuda_counts_static   gpu/progs/cuda_counts.cu, nvcc 13.0, static cudart (nvcc's default)
#   bin/cuda_counts_shared   the same, -cudart shared (NEEDED libcudart.so.13)
#   bin/cuda_counts_cu129    the same source against the CUDA 12.9 runtime: the 12.9 headers of the
#                            nvidia-cuda-runtime-cu12 wheel (.deps/cu129) and linked to its
#                            libcudart.so.12 (copied to cu129/lib/). The 12.9 nvcc wheel holds no
#                            nvcc driver (only ptxas and nvvm), so nvcc 13.0 compiles it; nvcc 13.0's
#                            own crt/ headers are kept (the 12.9 crt/host_runtime.h does not match
#                            the 13.0 front end's stubs).
#   bin/driver_counts        gpu/progs/driver_counts.cpp, g++, linked with -lcuda (stub)
#   bin/libtorch_loop        only when LIBTORCH_CMAKE_PREFIX is set or python3 has torch (optional)
#   shim/                    a copy of build/lib/libcudashim.so and build/bin/cudashim, when built
# Usage: gpu/prebuild.sh [OUT_DIR]      (gpu/run_gpu.sh calls it on the GPU host when .carry is missing)
# Exit status: the number of programs that failed to build (each is tried).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUTDIR=${1:-$ROOT/.carry/gpu}
mkdir -p "$OUTDIR/bin" "$OUTDIR/cu129/lib"
OUTDIR=$(cd "$OUTDIR" && pwd)

NVCC=${NVCC:-$(command -v nvcc || true)}
for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-13.0/bin/nvcc; do
  [ -n "$NVCC" ] && break
  [ -x "$c" ] && NVCC=$c
done
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "${NVCC:-/usr/local/cuda/bin/nvcc}")")")}
CU129=${CU129:-$ROOT/.deps/cu129/nvidia/cuda_runtime}
NVFLAGS=(-std=c++17 -arch=sm_90 -O2 -lineinfo)
SRC=gpu/progs/cuda_counts.cu
failed=0
fail() { echo "prebuild: FAILED: $*" >&2; failed=$((failed + 1)); }
# has_import BIN SYMBOL@VERSION: the binary imports exactly that versioned symbol.
has_import() { local syms; syms=$(nm -D "$1" 2>/dev/null); grep -q " U $2\$" <<<"$syms"; }

echo "prebuild: nvcc=$NVCC ($("$NVCC" --version 2>/dev/null | tail -1)), CUDA_HOME=$CUDA_HOME, out=$OUTDIR"
if [ -z "$NVCC" ] || ! "$NVCC" --version >/dev/null 2>&1; then
  fail "no nvcc: cuda_counts_* not built"
else
  "$NVCC" "${NVFLAGS[@]}" "$SRC" -o "$OUTDIR/bin/cuda_counts_static" || fail cuda_counts_static
  # the stream-ordered allocator under a cap (gpu/run_sync_cap.sh)
  "$NVCC" "${NVFLAGS[@]}" gpu/progs/async_cap.cu -o "$OUTDIR/bin/async_cap" || fail async_cap
  if [ -f "$OUTDIR/bin/cuda_counts_static" ] && grep -q 'NEEDED.*libcudart' <<<"$(readelf -d "$OUTDIR/bin/cuda_counts_static")"; then
    fail "cuda_counts_static links a shared libcudart"
  fi
  "$NVCC" "${NVFLAGS[@]}" -cudart shared "$SRC" -o "$OUTDIR/bin/cuda_counts_shared" || fail cuda_counts_shared
  if [ -f "$OUTDIR/bin/cuda_counts_shared" ] && ! has_import "$OUTDIR/bin/cuda_counts_shared" "__cudaLaunchKernel@libcudart.so.13"; then
    fail "cuda_counts_shared does not import __cudaLaunchKernel@libcudart.so.13 (cuda_counts.cu names the <<<>>> ABI so)"
  fi
  if [ -f "$CU129/include/cuda_runtime_api.h" ] && [ -f "$CU129/lib/libcudart.so.12" ]; then
    "$NVCC" "${NVFLAGS[@]}" -I"$CU129/include" -cudart none "$SRC" -o "$OUTDIR/bin/cuda_counts_cu129" \
      -L"$CU129/lib" -l:libcudart.so.12 || fail cuda_counts_cu129
    cp -f "$CU129/lib/libcudart.so.12" "$OUTDIR/cu129/lib/"
    if [ -f "$OUTDIR/bin/cuda_counts_cu129" ] && ! has_import "$OUTDIR/bin/cuda_counts_cu129" "cudaMalloc@libcudart.so.12"; then
      fail "cuda_counts_cu129 does not import cudaMalloc@libcudart.so.12"
    fi
  else
    fail "cuda_counts_cu129: no CUDA 12.9 runtime in $CU129 (scripts/setup.sh installs it)"
  fi
fi

STUBS=""
for d in "$CUDA_HOME/lib64/stubs" "$CUDA_HOME/targets/x86_64-linux/lib/stubs" /usr/local/cuda/lib64/stubs; do
  [ -f "$d/libcuda.so" ] && { STUBS=$d; break; }
done
if [ -n "$STUBS" ]; then
  ${CXX:-g++} -std=c++17 -O2 -Wall -Wextra -I"$CUDA_HOME/include" gpu/progs/driver_counts.cpp \
    -o "$OUTDIR/bin/driver_counts" -L"$STUBS" -lcuda -ldl || fail driver_counts
else
  fail "driver_counts: no libcuda.so stub under $CUDA_HOME"
fi

# Optional: libtorch_loop, when a libtorch is at hand (on the GPU host run_gpu.sh builds it there).
PREFIX=${LIBTORCH_CMAKE_PREFIX:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)}
if [ -n "$PREFIX" ]; then
  B=$(mktemp -d /tmp/libtorch_loop_build.XXXXXX)
  if TORCH_CUDA_ARCH_LIST=9.0 cmake -S gpu/libtorch_loop -B "$B" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release >"$B/cmake.log" 2>&1 &&
     cmake --build "$B" -j"$(nproc)" >>"$B/cmake.log" 2>&1; then
    cp -f "$B/libtorch_loop" "$OUTDIR/bin/libtorch_loop"
    echo "$PREFIX" > "$OUTDIR/bin/libtorch_loop.prefix"
  else
    tail -20 "$B/cmake.log" >&2
    fail "libtorch_loop (log $B/cmake.log)"
  fi
fi

if [ -f build/lib/libcudashim.so ] && [ -f build/bin/cudashim ] && [ "$OUTDIR" = "$ROOT/.carry/gpu" ]; then
  mkdir -p "$OUTDIR/shim"
  cp -f build/lib/libcudashim.so build/bin/cudashim "$OUTDIR/shim/"
fi

{
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname) ($(. /etc/os-release; echo "$PRETTY_NAME"))"
  echo "nvcc: $("$NVCC" --version 2>/dev/null | tail -1)"
  echo "host compiler: $(${CXX:-g++} --version | head -1)"
  echo "cuda 12.9 runtime: $(ls -d "$ROOT"/.deps/cu129/nvidia_cuda_runtime_cu12-*.dist-info 2>/dev/null | head -1 | xargs -r basename)"
  (cd "$OUTDIR" && find . -type f ! -name BUILD-INFO.txt -printf '%P\n' | sort | xargs -r sha256sum)
} > "$OUTDIR/BUILD-INFO.txt"
echo "prebuild: $(ls "$OUTDIR/bin" | tr '\n' ' ')-> $OUTDIR ($failed failure(s))"
exit "$failed"
