#!/usr/bin/env bash
# pythons.sh find X.Y | install [X.Y ...]: the CPython interpreters the Python tests run on
# (tests/preload/python_sites.py: one CTest test per version, 3.10 to 3.14, the versions
# torch 2.11 supports; and 3.9, one the shim's frame reader does not know).
#   find X.Y     print the path of a CPython X.Y, or say on stderr where it looked and exit 1.
#                In this order: $CUDASHIM_PYTHON_X_Y; the cache (what `install` fetched);
#                pythonX.Y on PATH; pyenv's builds (${PYENV_ROOT:-~/.pyenv}/versions/X.Y.*).
#   install      fetch, into the cache, Debian's own build of each version a Debian suite
#                still ships: 3.9 (bullseye), 3.11 (bookworm), 3.13 (trixie), 3.14 (sid); with no root:
#                `apt-get download` with a private package list, then `dpkg-deb -x` of the
#                interpreter, its standard library and the C library it was built for. Each
#                runs through its own dynamic loader (bin/pythonX.Y in the cache is that
#                wrapper), so a newer suite's build runs on an older host. 3.10 and 3.12 are
#                in no Debian suite: `install` only checks that `find` sees one (Ubuntu 22.04's
#                and 24.04's python3, pyenv, $CUDASHIM_PYTHON_X_Y) and says so when not.
#                Exits 1 when a version is left without an interpreter.
# The cache: ${CUDASHIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cudashim}/python-X.Y, one
# folder per version, filled once (a second run takes a second). The Debian mirror:
# $CUDASHIM_DEBIAN_MIRROR (the default is Debian's own).
set -euo pipefail
cache=${CUDASHIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cudashim}
mirror=${CUDASHIM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
VERSIONS=(3.9 3.10 3.11 3.12 3.13 3.14)
# The suite whose packages give each version (none: no Debian suite ships it).
suite_of() {
  case $1 in
    3.9) echo bullseye ;;
    3.11) echo bookworm ;;
    3.13) echo trixie ;;
    3.14) echo sid ;;
    *) echo none ;;
  esac
}

usage() {
  echo "usage: scripts/pythons.sh find X.Y | install [X.Y ...] (X.Y one of ${VERSIONS[*]})" >&2
  exit 2
}

check_version() {
  local v
  for v in "${VERSIONS[@]}"; do [ "$v" = "$1" ] && return 0; done
  echo "pythons: unknown version '$1': use one of ${VERSIONS[*]}" >&2
  exit 2
}

# runs PY: true when PY is CPython X.Y with ctypes.
runs() {
  local py=$1 v=$2
  [ -x "$py" ] && [ "$("$py" -c 'import ctypes, sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$v" ]
}

find_python() {
  local v=$1 var py
  var=CUDASHIM_PYTHON_${v/./_}
  if [ -n "${!var:-}" ]; then
    runs "${!var}" "$v" && { echo "${!var}"; return 0; }
    echo "pythons: $var=${!var} is not a CPython $v with ctypes" >&2
    return 1
  fi
  local pyenv=()  # pyenv's builds of X.Y, the newest patch release first
  mapfile -t pyenv < <(printf '%s\n' "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python"$v" | sort -V -r)
  for py in "$cache/python-$v/bin/python$v" "$(command -v "python$v" 2>/dev/null || true)" "${pyenv[@]}"; do
    [ -n "$py" ] && runs "$py" "$v" && { echo "$py"; return 0; }
  done
  echo "pythons: no CPython $v: not in $cache/python-$v, not python$v on PATH, not in ${PYENV_ROOT:-$HOME/.pyenv}/versions; run scripts/pythons.sh install, or set $var" >&2
  return 1
}

# fetch_debian X.Y SUITE: Debian's pythonX.Y from SUITE, unpacked into the cache with its loader.
fetch_debian() {
  local v=$1 suite=$2
  local dir=$cache/python-$v apt tmp
  tmp=$dir.tmp.$$
  rm -rf "$tmp"
  mkdir -p "$tmp"/apt/{lists/partial,archives/partial} "$tmp/debs" "$tmp/root" "$tmp/bin"
  echo "deb $mirror $suite main" >"$tmp/apt/sources.list"
  : >"$tmp/apt/status"
  apt=(-o Dir::Etc::SourceList="$tmp/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
       -o Dir::State::Lists="$tmp/apt/lists" -o Dir::Cache="$tmp/apt" -o Dir::Cache::Archives="$tmp/apt/archives"
       -o Dir::State::status="$tmp/apt/status" -o Dir::Etc::Preferences=/nonexistent
       -o Dir::Etc::PreferencesParts=/nonexistent -o APT::Architecture=amd64 -o Acquire::Languages=none
       -o APT::Sandbox::User="$(id -un)" -o Debug::NoLocking=1)
  echo "pythons: fetching CPython $v from Debian $suite into $dir (once)" >&2
  if ! apt-get "${apt[@]}" -qq update >"$tmp/apt.log" 2>&1; then
    echo "pythons: apt-get update of Debian $suite failed ($mirror); the log: $dir.log" >&2
    cp "$tmp/apt.log" "$dir.log"; rm -rf "$tmp"; return 1
  fi
  # The interpreter, its standard library, and the libraries they link (the C library of
  # that suite first: a newer suite's build needs it).
  local pkgs=("python$v-minimal" "libpython$v-minimal" "libpython$v-stdlib" libc6 zlib1g libexpat1
              libzstd1 liblzma5 libbz2-1.0)
  case $suite in
    sid|trixie) pkgs+=(libffi8 libssl3t64) ;;
    bookworm) pkgs+=(libffi8 libssl3) ;;
    *) pkgs+=(libffi7 libssl1.1) ;;
  esac
  if ! (cd "$tmp/debs" && apt-get "${apt[@]}" -qq download "${pkgs[@]}") >>"$tmp/apt.log" 2>&1; then
    echo "pythons: apt-get download of ${pkgs[*]} from Debian $suite failed; the log: $dir.log" >&2
    cp "$tmp/apt.log" "$dir.log"; rm -rf "$tmp"; return 1
  fi
  # A suite whose C library is not newer than the host's runs on the host's (its libc6 is
  # left out: two C libraries do not mix in one process); a newer one brings its own C
  # library and runs by its own dynamic loader.
  local deb suite_libc host_libc own_libc=0
  suite_libc=$(basename "$tmp"/debs/libc6_*.deb | sed 's/^libc6_\([0-9]*\.[0-9]*\).*/\1/')
  host_libc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  if [ -z "$host_libc" ] || [ "$(printf '%s\n%s\n' "$suite_libc" "$host_libc" | sort -V | tail -n 1)" != "$host_libc" ]; then
    own_libc=1
  fi
  for deb in "$tmp"/debs/*.deb; do
    case $(basename "$deb") in libc6_*) ((own_libc)) || continue ;; esac
    dpkg-deb -x "$deb" "$tmp/root"
  done
  # shellcheck disable=SC2016 # expanded by the wrapper, not here
  local libs='$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu'
  rm -rf "$dir"
  # The wrapper names the final folder: written for it, then the folder moved into place.
  if ((own_libc)); then
    local loader target
    loader=
    for target in "$tmp"/root/usr/lib64/ld-linux-x86-64.so.2 "$tmp"/root/lib64/ld-linux-x86-64.so.2; do
      if [ -e "$target" ] || [ -L "$target" ]; then loader=$target; break; fi
    done
    [ -n "$loader" ] || { echo "pythons: Debian $suite's libc6 holds no ld-linux-x86-64.so.2" >&2; rm -rf "$tmp"; return 1; }
    loader=${loader#"$tmp/root/"}
    # Older suites make it an absolute link (/lib64 -> /lib/x86_64-linux-gnu/ld-2.31.so): follow it inside the root.
    while [ -L "$tmp/root/$loader" ]; do
      target=$(readlink "$tmp/root/$loader")
      case $target in
        /*) loader=${target#/} ;;
        *) loader=$(dirname "$loader")/$target ;;
      esac
    done
    cat >"$tmp/bin/python$v" <<EOF
#!/bin/sh
# CPython $v from Debian $suite's packages (scripts/pythons.sh), run by that suite's own
# dynamic loader and C library (glibc $suite_libc; the host has ${host_libc:-an unknown one});
# LD_LIBRARY_PATH and LD_PRELOAD still apply after them.
root=$dir/root
exec "\$root/$loader" --library-path "$libs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" "\$root/usr/bin/python$v" "\$@"
EOF
  else
    cat >"$tmp/bin/python$v" <<EOF
#!/bin/sh
# CPython $v from Debian $suite's packages (scripts/pythons.sh), on the host's C library
# (glibc $host_libc; $suite's is $suite_libc), its own libraries after LD_LIBRARY_PATH.
root=$dir/root
LD_LIBRARY_PATH="\${LD_LIBRARY_PATH:+\$LD_LIBRARY_PATH:}$libs" exec "\$root/usr/bin/python$v" "\$@"
EOF
  fi
  chmod +x "$tmp/bin/python$v"
  ls "$tmp"/debs >"$tmp/packages.txt"
  rm -rf "$tmp/apt" "$tmp/debs" "$tmp/apt.log"
  mv "$tmp" "$dir"
  runs "$dir/bin/python$v" "$v" || { echo "pythons: Debian $suite's CPython $v does not run here: $dir/bin/python$v" >&2; return 1; }
}

install_pythons() {
  local v status=0 suite py
  for v in "$@"; do
    check_version "$v"
    suite=$(suite_of "$v")
    if [ "$suite" != none ] && ! runs "$cache/python-$v/bin/python$v" "$v"; then
      fetch_debian "$v" "$suite" || status=1
    fi
    if py=$(find_python "$v" 2>/dev/null); then
      echo "pythons: CPython $v: $py" >&2
    else
      find_python "$v" >/dev/null || true
      [ "$suite" = none ] && echo "pythons: CPython $v is in no Debian suite: install it (Ubuntu's python$v, pyenv) or set CUDASHIM_PYTHON_${v/./_}" >&2
      status=1
    fi
  done
  return $status
}

case "${1:-}" in
  find) [ $# -eq 2 ] || usage; check_version "$2"; find_python "$2" ;;
  install) shift; if [ $# -eq 0 ]; then install_pythons "${VERSIONS[@]}"; else install_pythons "$@"; fi ;;
  *) usage ;;
esac
