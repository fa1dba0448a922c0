#!/usr/bin/env bash
# build_wheel.sh [--all | --aarch64] [OUT_DIR]: the cudashim wheel in one command (default:
# dist/), then checked: auditwheel show (when scripts/setup.sh --tests installed it) and the
# highest glibc version each native file needs (tests/hygiene/check_glibc.py).
#   (no option)  the x86-64 wheel, cudashim-VERSION-py3-none-manylinux_2_28_x86_64.whl
#   --aarch64    the AArch64 wheel (Grace: GH200, GB200, GB300), ..._manylinux_2_28_aarch64.whl,
#                cross-built with Debian's cross toolchain (cmake/aarch64-linux-gnu.cmake;
#                scripts/setup.sh --aarch64 installs it), from the same sources and options
#   --all        both, one after the other
# This is also the fast build: only the preload library and the CLI, tests and examples
# off, in build-wheel/ (build-wheel-aarch64/ for AArch64; CUDASHIM_WHEEL_BUILD=DIR builds an
# existing tree instead). Needs what scripts/setup.sh installs; no network, no root.
set -euo pipefail
cd "$(dirname "$0")/.."
arches=(x86_64)
case "${1:-}" in
  --all) arches=(x86_64 aarch64); shift ;;
  --aarch64) arches=(aarch64); shift ;;
  -*) echo "build_wheel: unknown option '$1'; usage: scripts/build_wheel.sh [--all | --aarch64] [OUT_DIR]" >&2; exit 2 ;;
esac
out=${1:-dist}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
built=()
for arch in "${arches[@]}"; do
  objdump=objdump
  if [ "$arch" = aarch64 ]; then
    command -v aarch64-linux-gnu-g++ >/dev/null || {
      echo "build_wheel: no aarch64-linux-gnu-g++: run scripts/setup.sh --aarch64 (Debian's cross toolchain)" >&2
      exit 1
    }
    objdump=aarch64-linux-gnu-objdump
  fi
  echo "== build_wheel: $arch ==" >&2
  CUDASHIM_TARGET=$arch python3 -m pip wheel --quiet --no-deps --no-build-isolation --disable-pip-version-check -w "$out" .
  whl=$(ls -t "$out"/cudashim-*-py3-none-manylinux_2_28_"$arch".whl | head -n 1)
  rm -rf "${tmp:?}"/*
  python3 -m zipfile -e "$whl" "$tmp"
  python3 tests/hygiene/check_glibc.py --objdump "$objdump" "$tmp/cudashim/lib/libcudashim.so" "$tmp/cudashim/bin/cudashim"
  if [ -d .deps/pytools/auditwheel ]; then
    PYTHONPATH=$PWD/.deps/pytools python3 -m auditwheel show "$whl"
  fi
  built+=("$whl")
done
for whl in "${built[@]}"; do
  echo "build_wheel: $whl"
done
echo "install it with: python3 -m pip install ${built[0]}   (a venv, --user or --target DIR: no root needed)"
[ "${#built[@]}" -gt 1 ] || [ "${arches[0]}" = aarch64 ] &&
  echo "the aarch64 wheel goes to a Grace node: python3 -m pip install cudashim-*_aarch64.whl there (docs/aarch64.md)"
exit 0
