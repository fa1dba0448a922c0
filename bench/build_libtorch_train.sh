#!/usr/bin/env bash
# build_libtorch_train.sh [OUT]: build bench/libtorch_train.cpp against the pip torch that
# $PYTHON (default python3) imports, with g++ and no CMake. OUT defaults to
# build-bench/bench/libtorch_train. Run it on the GPU host, where torch is installed:
#   bash bench/build_libtorch_train.sh /tmp/lt && /tmp/lt --model conv --steps 300
# Prints the command it ran; fails with one line naming what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${1:-build-bench/bench/libtorch_train}
CXX=${CXX:-g++}

TORCH=$("$PY" -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null) || {
  echo "build_libtorch_train: '$PY' cannot import torch: install the torch wheel first (or set PYTHON)" >&2
  exit 1
}
# The wheel's own C++ ABI (1 for torch 2.11, as for every wheel since 2.7): a mismatch links
# but fails at run time with undefined std::__cxx11 symbols.
ABI=$("$PY" -c 'import torch; print(int(torch.compiled_with_cxx11_abi()))')
for f in "$TORCH/include/torch/csrc/api/include/torch/torch.h" "$TORCH/lib/libtorch_cuda.so"; do
  [ -e "$f" ] || { echo "build_libtorch_train: $f is missing: this torch has no C++ headers or no CUDA" >&2; exit 1; }
done

mkdir -p "$(dirname "$OUT")"
cmd=("$CXX" -O2 -g -std=c++17 -D_GLIBCXX_USE_CXX11_ABI="$ABI" -pthread
  -isystem "$TORCH/include" -isystem "$TORCH/include/torch/csrc/api/include"
  bench/libtorch_train.cpp -o "$OUT"
  -L"$TORCH/lib" -Wl,-rpath,"$TORCH/lib"
  # libtorch_cuda is referenced by no symbol of ours: without --no-as-needed the linker drops
  # it and torch::cuda::is_available() is false at run time.
  -Wl,--no-as-needed -ltorch_cuda -ltorch -Wl,--as-needed -ltorch_cpu -lc10_cuda -lc10
  # libtorch_cuda's own dependencies (cuDNN, NCCL, cuSPARSELt, ... in site-packages/nvidia)
  # are found at run time through its RUNPATH; the link need not resolve them.
  -Wl,--allow-shlib-undefined)
echo "${cmd[*]}"
"${cmd[@]}"
echo "built $OUT (torch $("$PY" -c 'import torch; print(torch.__version__)'), C++ ABI $ABI)"
