#!/usr/bin/env bash
# old_userland.sh [DIST]: print the path of a root filesystem of an older distribution,
# built from its Debian packages on first use and cached (the tests that prove the
# wheel on an older glibc run inside it: tests/oldglibc/).
#   DIST  bullseye (default): Debian 11, glibc 2.31, Python 3.9. Older Debian releases
#         (buster: glibc 2.28) have left deb.debian.org for archive.debian.org, which
#         the build machines cannot reach; CUDASHIM_OLD_MIRROR points elsewhere.
# The cache lives in ${CUDASHIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cudashim}, keyed by
# the distribution and the package list: a second run prints the path at once. Needs root
# (debootstrap, as the rest of scripts/setup.sh does through apt-get); the programs inside
# it run as an unprivileged user.
set -euo pipefail
dist=${1:-bullseye}
mirror=${CUDASHIM_OLD_MIRROR:-http://deb.debian.org/debian}
packages=python3,python3-venv,ca-certificates
cache=${CUDASHIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cudashim}
key=$(printf '%s %s 1' "$dist" "$packages" | sha256sum | cut -c1-12)
root=$cache/rootfs-$dist-$key
if [ -f "$root/.complete" ]; then
  echo "$root"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "old_userland: building the $dist root filesystem needs root (debootstrap); run scripts/setup.sh as root once, or set CUDASHIM_CACHE to a folder holding one" >&2
  exit 77
fi
command -v debootstrap >/dev/null || {
  echo "old_userland: installing debootstrap" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
}
mkdir -p "$cache"
tmp=$root.tmp.$$
rm -rf "$tmp"
echo "old_userland: building a Debian $dist root filesystem in $root (once; 2 to 5 minutes)" >&2
if ! debootstrap --variant=minbase --include="$packages" "$dist" "$tmp" "$mirror" >"$cache/debootstrap-$dist.log" 2>&1; then
  echo "old_userland: debootstrap failed; the log: $cache/debootstrap-$dist.log" >&2
  tail -n 20 "$cache/debootstrap-$dist.log" >&2
  rm -rf "$tmp"
  exit 1
fi
rm -rf "$tmp"/var/cache/apt/archives/*.deb
chmod 1777 "$tmp/tmp"
touch "$tmp/.complete"
rm -rf "$root"
mv "$tmp" "$root"
echo "$root"
