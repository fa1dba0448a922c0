#!/usr/bin/env bash
# quickstart_fresh.sh [DIST]: README's quick start on a fresh machine, for real: a minimal
# Debian root filesystem (default bookworm, Debian 12: no compiler, no CUDA toolkit, no
# Python packages), a clean clone of this repository in it, and ./scripts/quickstart.sh run
# inside as root (it installs its own packages). Prints the quick start's output and how long
# it took. Needs root and the network; not part of CI (it downloads ~300 MB of packages and
# builds the wheel from nothing: 10 to 20 minutes on 2 cores). The result of a run is in
# docs/install-proof.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=${1:-bookworm}
root=$(mktemp -d /var/tmp/cudashim-fresh-XXXXXX)
trap 'umount -l "$root/proc" 2>/dev/null || true; rm -rf "$root"' EXIT
echo "fresh: debootstrap --variant=minbase $dist into $root"
debootstrap --variant=minbase --include=git,ca-certificates,sudo "$dist" "$root" http://deb.debian.org/debian > "$root.log" 2>&1 ||
  { tail -20 "$root.log"; exit 1; }
# The build machines reach PyPI through a TLS-inspecting proxy: its CA goes in (the host's
# bundle), nothing else of the host does.
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$root/etc/pip.conf"
sed -i '/find-links/d' "$root/etc/pip.conf" 2>/dev/null || true
git clone -q "$PWD" "$root/src/cudashim"
mount -t proc proc "$root/proc"
start=$SECONDS
chroot "$root" /bin/bash -c 'cd /src/cudashim && ./scripts/quickstart.sh' 2>&1 | tail -80
echo "fresh: quickstart on $dist finished in $((SECONDS - start)) s; /usr/local/cuda present: $([ -e "$root/usr/local/cuda" ] && echo yes || echo no)"
