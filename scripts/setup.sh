#!/usr/bin/env bash
# setup.sh [--tests] [--aarch64]: install what cudashim needs, pinned. Idempotent: a second run
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
#                     about 60 MB, cached, no root needed; 3.10, 3.12 must be on the machine);
#                     and everything of --aarch64 with what its tests need (below)
#   setup.sh --aarch64  the AArch64 build (scripts/build_wheel.sh --all, docs/aarch64.md):
#                     Debian's cross toolchain (g++-aarch64-linux-gnu) and the arm64 -dev
#                     packages the build links (dpkg --add-architecture arm64 first). With
#                     --tests also: qemu-user, the arm64 root filesystem of tests/aarch64
#                     (scripts/arm64_userland.sh, cached, about 12 MB) and NVIDIA's arm64
#                     CUDA 12.9 runtime wheel in .deps/cu129-aarch64 (3.5 MB)
# Everything downloaded lands in .deps/ (git-ignored) or the cache of old_userland.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEPS=$ROOT/.deps
TESTS=0
AARCH64=0
for arg in "$@"; do
  case "$arg" in
    --tests) TESTS=1; AARCH64=1 ;;
    --aarch64) AARCH64=1 ;;
    *) echo "setup: unknown argument '$arg'; usage: scripts/setup.sh [--tests] [--aarch64]" >&2; exit 2 ;;
  esac
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo

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

# The AArch64 build: the cross compiler and binutils, and the arm64 builds of the libraries
# linked statically into the shipped binaries (as the x86-64 list above) plus the
# header-only ones whose CMake packages are per-architecture. catch2 and nlohmann-json's
# host packages serve both (header-only, architecture-independent CMake files).
if ((AARCH64)); then
  APT_PACKAGES+=(
    g++-aarch64-linux-gnu binutils-aarch64-linux-gnu
    libelf-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64 libdw-dev:arm64 liblzma-dev:arm64 libbz2-dev:arm64
    libfmt-dev:arm64 libtomlplusplus-dev:arm64
  )
  ((TESTS)) && APT_PACKAGES+=(qemu-user)   # tests/aarch64: qemu-aarch64, called explicitly (no binfmt_misc needed)
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "setup: adding the arm64 architecture to dpkg (for the :arm64 -dev packages)"
    $SUDO dpkg --add-architecture arm64
    ADDED_ARCH=1
  fi
fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})) || [ -n "${ADDED_ARCH:-}" ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  ((${#missing[@]})) && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
# fetch_wheel NAME==VERSION PREFIX: the wheel from PyPI, unpacked into .deps/PREFIX (once).
# fetch_wheel NAME==VERSION PREFIX [aarch64]: the same for the arm64 wheel (manylinux_2_17_aarch64).
fetch_wheel() {
  local w=$1 prefix=$2 arch=${3:-} name ver stamp whl platform=()
  name=${w%%==*}; ver=${w##*==}
  stamp="$DEPS/$prefix/.${name}-${ver}.done"
  [ -f "$stamp" ] && return 0
  echo "setup: fetching $w${arch:+ ($arch)} from PyPI (into .deps/$prefix)"
  mkdir -p "$DEPS/wheels" "$DEPS/$prefix"
  [ "$arch" = aarch64 ] && platform=(--platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64)
  "$PY" -m pip download --quiet --no-deps --only-binary=:all: "${platform[@]}" --dest "$DEPS/wheels" "$w"
  if [ -n "$arch" ]; then
    whl=$(ls "$DEPS"/wheels/"${name//-/_}"-"$ver"-*"$arch"*.whl | head -n 1)
  else  # the host's: never the arm64 wheel of the same version beside it
    whl=$(ls "$DEPS"/wheels/"${name//-/_}"-"$ver"-*.whl | grep -v aarch64 | head -n 1)
  fi
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

# Prometheus and promtool for the fleet test (tests/fleet/prometheus_test.py): Debian's own
# package, unpacked without root into .deps/prometheus (its binaries are static Go programs).
if ((TESTS)) && [ ! -x "$DEPS/prometheus/usr/bin/prometheus" ]; then
  echo "setup: fetching Debian's prometheus package (into .deps/prometheus)"
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download prometheus >/dev/null 2>&1) && dpkg -x "$tmp"/prometheus_*.deb "$DEPS/prometheus"
  rm -rf "$tmp"
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
  # The AArch64 subset (tests/aarch64): the arm64 root filesystem qemu runs the programs in,
  # and NVIDIA's arm64 libcudart for the wheel's run (cached; no root needed for either).
  ./scripts/arm64_userland.sh >/dev/null
  fetch_wheel "nvidia-cuda-runtime-cu12==12.9.79" cu129-aarch64 aarch64
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
