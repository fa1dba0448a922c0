#!/usr/bin/env bash
# setup.sh: install everything cudashim needs to build and test, pinned. Idempotent:
# a second run changes nothing and takes seconds.
#   - Debian packages (apt-get; needs root, as on the dev and CI machines)
#   - the CUDA 12.9 runtime and nvcc wheels from PyPI, unpacked into .deps/ (git-ignored)
# CUDA 13.0 itself is preinstalled in /usr/local/cuda on these machines.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEPS=$ROOT/.deps

APT_PACKAGES=(
  build-essential cmake ninja-build python3 python3-pip unzip
  libelf-dev zlib1g-dev libzstd-dev          # libelf, linked statically, and what it needs
  libspdlog-dev libfmt-dev                   # header-only inside the preload library
  catch2 nlohmann-json3-dev libtomlplusplus-dev libcli11-dev
  binutils file
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Pinned NVIDIA wheels: name==version -> folder under .deps
WHEELS=(
  "nvidia-cuda-runtime-cu12==12.9.79"
  "nvidia-cuda-nvcc-cu12==12.9.86"
)
PY=${PYTHON:-python3}
mkdir -p "$DEPS/wheels" "$DEPS/cu129"
for w in "${WHEELS[@]}"; do
  name=${w%%==*}; ver=${w##*==}
  stamp="$DEPS/cu129/.${name}-${ver}.done"
  [ -f "$stamp" ] && continue
  echo "setup: fetching $w from PyPI"
  "$PY" -m pip download --quiet --no-deps --only-binary=:all: --dest "$DEPS/wheels" "$w"
  whl=$(ls "$DEPS"/wheels/"${name//-/_}"-"$ver"-*.whl | head -n 1)
  unzip -q -o "$whl" -d "$DEPS/cu129"
  touch "$stamp"
done

# The layout tests and builds rely on:
#   .deps/cu129/nvidia/cuda_runtime/include/cuda.h      (12.9 headers)
#   .deps/cu129/nvidia/cuda_runtime/lib/libcudart.so.12 (12.9 runtime)
test -f "$DEPS/cu129/nvidia/cuda_runtime/include/cuda.h" || { echo "setup: CUDA 12.9 headers missing after install" >&2; exit 1; }
test -f /usr/local/cuda/include/cuda.h || { echo "setup: /usr/local/cuda/include/cuda.h is missing: install the CUDA 13.0 toolkit" >&2; exit 1; }
echo "setup: ok (CUDA 13.0 at /usr/local/cuda, CUDA 12.9 wheels in .deps/cu129)"
