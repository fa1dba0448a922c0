#!/usr/bin/env bash
# arm64_userland.sh: print the path of a small Debian 12 arm64 root filesystem, built on
# first use and cached: the guest root (qemu-aarch64 -L) of the AArch64 tests
# (tests/aarch64/). It holds the C library and loader, libstdc++/libgcc (the test
# programs link them; the shipped binaries do not) and CPython 3.11 with ctypes, nothing
# else: no shell, no package manager, nothing configured. As scripts/pythons.sh does,
# `apt-get download` with a private package list (Debian's arm64 .debs; no root, no
# dpkg --add-architecture), then `dpkg-deb -x` of each.
# The cache: ${CUDASHIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cudashim}/rootfs-arm64-bookworm-KEY,
# keyed by the package list: a second run prints the path at once. The mirror:
# $CUDASHIM_DEBIAN_MIRROR (Debian's own by default). About 12 MB to download.
set -euo pipefail
cache=${CUDASHIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cudashim}
mirror=${CUDASHIM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
PACKAGES=(libc6 libgcc-s1 libstdc++6
          python3.11-minimal libpython3.11-minimal libpython3.11-stdlib
          zlib1g libexpat1 libffi8 libssl3 libzstd1 liblzma5 libbz2-1.0)
key=$(printf '%s %s 1' "$suite" "${PACKAGES[*]}" | sha256sum | cut -c1-12)
root=$cache/rootfs-arm64-$suite-$key
if [ -f "$root/.complete" ]; then
  echo "$root"
  exit 0
fi
mkdir -p "$cache"
tmp=$root.tmp.$$
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/apt/{lists/partial,archives/partial} "$tmp/debs" "$tmp/root"
echo "deb $mirror $suite main" >"$tmp/apt/sources.list"
: >"$tmp/apt/status"
apt=(-o Dir::Etc::SourceList="$tmp/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
     -o Dir::State::Lists="$tmp/apt/lists" -o Dir::Cache="$tmp/apt" -o Dir::Cache::Archives="$tmp/apt/archives"
     -o Dir::State::status="$tmp/apt/status" -o Dir::Etc::Preferences=/nonexistent
     -o Dir::Etc::PreferencesParts=/nonexistent -o APT::Architecture=arm64 -o APT::Architectures=arm64
     -o Acquire::Languages=none -o APT::Sandbox::User="$(id -un)" -o Debug::NoLocking=1)
echo "arm64_userland: building a Debian $suite arm64 root filesystem in $root (once; about 12 MB)" >&2
if ! apt-get "${apt[@]}" -qq update >"$tmp/apt.log" 2>&1 ||
   ! (cd "$tmp/debs" && apt-get "${apt[@]}" -qq download "${PACKAGES[@]}") >>"$tmp/apt.log" 2>&1; then
  echo "arm64_userland: apt-get failed ($mirror $suite arm64); the log:" >&2
  tail -n 20 "$tmp/apt.log" >&2
  exit 1
fi
for deb in "$tmp"/debs/*.deb; do
  dpkg-deb -x "$deb" "$tmp/root"
done
test -x "$tmp/root/usr/bin/python3.11" && test -e "$tmp/root/lib/ld-linux-aarch64.so.1" || {
  echo "arm64_userland: the packages hold no usr/bin/python3.11 or lib/ld-linux-aarch64.so.1" >&2
  exit 1
}
ls "$tmp/debs" >"$tmp/root/.packages"
touch "$tmp/root/.complete"
rm -rf "$root"
mv "$tmp/root" "$root"
echo "$root"
