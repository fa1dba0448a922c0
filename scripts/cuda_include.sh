#!/usr/bin/env bash
# cuda_include.sh: print the folder of the CUDA 13 headers the main build uses: a
# toolkit's /usr/local/cuda/include when present, else the CUDA 13.0 runtime wheel's
# headers that scripts/setup.sh unpacks into .deps/cu130. Exit 1 when neither exists.
cd "$(dirname "$0")/.."
for d in /usr/local/cuda/include "$PWD/.deps/cu130/nvidia/cu13/include"; do
  if [ -f "$d/cuda.h" ]; then
    echo "$d"
    exit 0
  fi
done
echo "cuda_include: no cuda.h in /usr/local/cuda/include or .deps/cu130; run scripts/setup.sh" >&2
exit 1
