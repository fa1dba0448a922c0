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
  libdw-dev liblzma-dev libbz2-dev           # libdw (DWARF lines for `cudashim report`), static, CLI only
  libfmt-dev                                 # header-only inside the preload library
  catch2 nlohmann-json3-dev libtomlplusplus-dev libcli11-dev
  binutils file
  chromium fonts-dejavu-core                 # the HTML report's test renders it headless
  clang-14 libclang-rt-14-dev                # libFuzzer (-fsanitize=fuzzer) for tests/fuzz
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

# Pinned wheels for the realbin scenarios (tests/realbin/), each unpacked into its own prefix
# under .deps/realbin: name==version=prefix. cuSPARSE 12.2.0.103 (CUDA 12.3) calls
# __nvJitLink*_12_3: beside it (its RUNPATH $ORIGIN/../../nvjitlink/lib) the nvJitLink it
# needs, and in a prefix of its own the older 12.1 that breaks it. About 240 MB to download,
# almost all of it the cuSPARSE wheel (the smallest 12.x one that shows the shortfall).
REALBIN_WHEELS=(
  "nvidia-cusparse-cu12==12.2.0.103=cusparse122"   # 197 MB wheel
  "nvidia-nvjitlink-cu12==12.3.101=cusparse122"    # 21 MB
  "nvidia-nvjitlink-cu12==12.1.105=nvjitlink121"   # 20 MB
  "nvidia-cuda-cuobjdump==13.2.51=cuobjdump"       # 0.3 MB: nvidia/cu13/bin/cuobjdump
)
mkdir -p "$DEPS/realbin"
for entry in "${REALBIN_WHEELS[@]}"; do
  prefix=${entry##*=}; w=${entry%=*}
  name=${w%%==*}; ver=${w##*==}
  stamp="$DEPS/realbin/$prefix/.${name}-${ver}.done"
  [ -f "$stamp" ] && continue
  echo "setup: fetching $w from PyPI (for tests/realbin)"
  "$PY" -m pip download --quiet --no-deps --only-binary=:all: --dest "$DEPS/wheels" "$w"
  whl=$(ls "$DEPS"/wheels/"${name//-/_}"-"$ver"-*.whl | head -n 1)
  mkdir -p "$DEPS/realbin/$prefix"
  unzip -q -o "$whl" -d "$DEPS/realbin/$prefix"
  touch "$stamp"
done

# The layout tests and builds rely on:
#   .deps/cu129/nvidia/cuda_runtime/include/cuda.h      (12.9 headers)
#   .deps/cu129/nvidia/cuda_runtime/lib/libcudart.so.12 (12.9 runtime)
test -f "$DEPS/cu129/nvidia/cuda_runtime/include/cuda.h" || { echo "setup: CUDA 12.9 headers missing after install" >&2; exit 1; }
test -f /usr/local/cuda/include/cuda.h || { echo "setup: /usr/local/cuda/include/cuda.h is missing: install the CUDA 13.0 toolkit" >&2; exit 1; }
echo "setup: ok (CUDA 13.0 at /usr/local/cuda, CUDA 12.9 wheels in .deps/cu129)"
