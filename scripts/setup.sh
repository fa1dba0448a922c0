#!/usr/bin/env bash
# setup.sh [--tests]: install what cudashim needs, pinned. Idempotent: a second run
# changes nothing and takes seconds. On a fresh Debian 12 (Ubuntu 22.04/24.04: the same
# package names, not tried here), with root or sudo for apt-get.
#   setup.sh          what building the wheel needs (scripts/quickstart.sh):
#                     - Debian packages: compiler, CMake, the header-only libraries,
#                       static libelf/libdw, python3 and its venv module
#                     - CUDA headers: /usr/local/cuda when a toolkit is there, else the
#                       CUDA 13.0 runtime and crt wheels from PyPI (2 MB, headers included) in
#                       .deps/cu130; always the CUDA 12.9 runtime and nvcc wheels in
#                       .deps/cu129 (the second header set CI builds against)
#   setup.sh --tests  the test fixtures on top (scripts/test.sh): chromium, clang-14 for
#                     libFuzzer, debootstrap, auditwheel (.deps/pytools), the vendor
#                     wheels of tests/realbin (about 240 MB), the Debian 11 root
#                     filesystem of tests/oldglibc (scripts/old_userland.sh, cached), and
#                     CPython 3.9 to 3.14 for preload.python.call_sites.*
#                     (scripts/pythons.sh install: Debian's 3.9, 3.11, 3.13 and 3.14,
#                     about 60 MB, cached, no root needed; 3.10, 3.12 must be on the machine)
# Everything downloaded lands in .deps/ (git-ignored) or the cache of old_userland.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEPS=$ROOT/.deps
TESTS=0
case "${1:-}" in
  --tests) TESTS=1 ;;
  "") ;;
  *) echo "setup: unknown argument '$1'; usage: scripts/setup.sh [--tests]" >&2; exit 2 ;;
esac

APT_PACKAGES=(
  build-essential cmake ninja-build python3 python3-pip python3-venv unzip
  libelf-dev zlib1g-dev libzstd-dev          # libelf, linked statically, and what it needs
  libdw-dev liblzma-dev libbz2-dev           # libdw (DWARF lines for `cudashim report`), static, CLI only
  libfmt-dev                                 # header-only inside the preload library
  catch2 nlohmann-json3-dev libtomlplusplus-dev
  binutils file
)
if ((TESTS)); then
  APT_PACKAGES+=(
    chromium fonts-dejavu-core               # the HTML report's test renders it headless
    clang-14 libclang-rt-14-dev              # libFuzzer (-fsanitize=fuzzer) for tests/fuzz
    debootstrap                              # tests/oldglibc: the Debian 11 root filesystem
    python3-yaml shellcheck                  # tests/deploy: the manifests parse, the scripts lint clean
  )
fi

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

PY=${PYTHON:-python3}
# fetch_wheel NAME==VERSION PREFIX: the wheel from PyPI, unpacked into .deps/PREFIX (once).
fetch_wheel() {
  local w=$1 prefix=$2 name ver stamp whl
  name=${w%%==*}; ver=${w##*==}
  stamp="$DEPS/$prefix/.${name}-${ver}.done"
  [ -f "$stamp" ] && return 0
  echo "setup: fetching $w from PyPI (into .deps/$prefix)"
  mkdir -p "$DEPS/wheels" "$DEPS/$prefix"
  "$PY" -m pip download --quiet --no-deps --only-binary=:all: --dest "$DEPS/wheels" "$w"
  whl=$(ls "$DEPS"/wheels/"${name//-/_}"-"$ver"-*.whl | head -n 1)
  unzip -q -o "$whl" -d "$DEPS/$prefix"
  touch "$stamp"
}

# CUDA headers. The 12.9 set always (CI builds against both); the 13.0 set from PyPI only
# when no toolkit provides /usr/local/cuda/include/cuda.h (scripts/cuda_include.sh picks).
fetch_wheel "nvidia-cuda-runtime-cu12==12.9.79" cu129
fetch_wheel "nvidia-cuda-nvcc-cu12==12.9.86" cu129
if [ ! -f /usr/local/cuda/include/cuda.h ]; then
  fetch_wheel "nvidia-cuda-runtime==13.0.96" cu130   # cuda.h, cudaTypedefs.h, cuda_runtime_api.h
  fetch_wheel "nvidia-cuda-crt==13.0.88" cu130       # crt/host_defines.h, which cuda_runtime_api.h includes (0.1 MB)
fi

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
# tests/cli/doctor_env.py (doctor on a Python environment) needs no wheel of its own: it builds
# its venv from the CUDA 12.9 runtime wheel above (.deps/cu129, 3 MB, always fetched) and
# stand-ins for torch's metadata and libtorch_cuda.so; a real torch wheel (about 900 MB with
# its NVIDIA wheels) would add nothing doctor reads.
if ((TESTS)); then
  for entry in "${REALBIN_WHEELS[@]}"; do
    fetch_wheel "${entry%=*}" "realbin/${entry##*=}"
  done
  # auditwheel (tests/wheel): checks the wheel's manylinux tag against what its files need.
  if [ ! -f "$DEPS/pytools/.auditwheel-6.8.2.done" ]; then
    echo "setup: installing auditwheel 6.8.2 into .deps/pytools"
    "$PY" -m pip install --quiet --disable-pip-version-check --target "$DEPS/pytools" "auditwheel==6.8.2" 2>&1 | grep -v "WARNING: Running pip as" || true
    touch "$DEPS/pytools/.auditwheel-6.8.2.done"
  fi
  # CPython 3.9 to 3.14 (cached outside the tree). A version left without one fails its
  # preload.python.call_sites.X.Y test with the reason; setup goes on.
  ./scripts/pythons.sh install || echo "setup: some CPython versions are missing (above): their preload.python.call_sites tests will fail" >&2
  # The Debian 11 root filesystem (built once, cached outside the tree).
  if [ "$(id -u)" -eq 0 ]; then
    ./scripts/old_userland.sh bullseye >/dev/null
  else
    echo "setup: not root: tests/oldglibc will be skipped unless scripts/old_userland.sh ran as root once" >&2
  fi
fi

# The layout tests and builds rely on:
#   .deps/cu129/nvidia/cuda_runtime/include/cuda.h      (12.9 headers)
#   .deps/cu129/nvidia/cuda_runtime/lib/libcudart.so.12 (12.9 runtime)
test -f "$DEPS/cu129/nvidia/cuda_runtime/include/cuda.h" || { echo "setup: CUDA 12.9 headers missing after install" >&2; exit 1; }
cu13=$(./scripts/cuda_include.sh) || { echo "setup: no CUDA 13 headers after install" >&2; exit 1; }
echo "setup: ok (CUDA 13 headers in $cu13, CUDA 12.9 wheels in .deps/cu129$( ((TESTS)) && echo ', test fixtures'))"
