#!/bin/bash
# cudashim-node.sh: put the node-wide preload (/etc/ld.so.preload) and its policy
# (/etc/cudashim/policy.toml) in place, and take them back, without ever leaving the node
# with a library the loader cannot load, one that others could replace, or a policy that
# does not parse. Run it as root on the node (docs/deploy.md).
#
#   cudashim-node.sh [--root DIR] [--cli PATH] COMMAND [ARGS]
#     install-policy FILE   check FILE with `cudashim policy check`; install it as
#                           /etc/cudashim/policy.toml (0644, one rename: no process ever
#                           reads half a file); the one it replaces is kept as policy.toml.prev
#     rollback-policy       put policy.toml.prev back (none: remove policy.toml)
#     enable LIB [OUTDIR]   preload LIB (an absolute path) in every process of the node:
#                           refuses unless LIB and every folder above it belong to the user
#                           running this (root) and no one else can write them, the loader
#                           loads it into /bin/true and /bin/sh silently, and an installed
#                           policy passes the check. Makes OUTDIR (default /var/tmp/cudashim,
#                           the policy's output.dir) with mode 1777 and an
#                           /etc/tmpfiles.d/cudashim.conf that keeps it, then writes LIB as
#                           the first line of /etc/ld.so.preload (a libcudashim.so line that
#                           was there is replaced), in one rename
#     disable               take the libcudashim.so line out of /etc/ld.so.preload (the
#                           file goes when nothing else is left in it): the rollback
#     status                what is configured
#   --root DIR   work on the tree under DIR instead of / (an image being prepared, a test)
#   --cli PATH   the cudashim CLI (default: `cudashim` on PATH)
# Exit: 0 done, 1 refused (nothing was changed), 2 usage.
set -euo pipefail
umask 022
export LC_ALL=C

root=
cli=
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --root) [ $# -ge 2 ] || usage; root=${2%/}; shift 2 ;;
    --cli) [ $# -ge 2 ] || usage; cli=$2; shift 2 ;;
    -h | --help) usage ;;
    -*) usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
cmd=$1
shift

preload_file=$root/etc/ld.so.preload
policy_dir=$root/etc/cudashim
policy_file=$policy_dir/policy.toml
tmpfiles_conf=$root/etc/tmpfiles.d/cudashim.conf
me=$(id -u)

say() { printf 'cudashim-node: %s\n' "$*" >&2; }
refuse() {
  say "$*; nothing was changed"
  exit 1
}

find_cli() {
  [ -n "$cli" ] || cli=$(command -v cudashim || true)
  { [ -n "$cli" ] && [ -x "$cli" ]; } || refuse "no cudashim CLI (pass --cli PATH)"
}

# policy_ok FILE: the CLI's check (its messages go to stderr). The CLI also layers the
# /etc/cudashim/policy.toml of the machine it runs on under FILE.
policy_ok() {
  find_cli
  "$cli" policy check "$1" >/dev/null
}

# write_atomically DEST MODE < CONTENT: a temporary file next to DEST, then one rename.
write_atomically() {
  local dest=$1 mode=$2 tmp
  tmp=$(mktemp "$(dirname "$dest")/.$(basename "$dest").XXXXXX")
  if ! cat >"$tmp" || ! chmod "$mode" "$tmp" || { [ "$me" = 0 ] && ! chown 0:0 "$tmp"; }; then
    rm -f "$tmp"
    refuse "cannot write $dest"
  fi
  mv -f "$tmp" "$dest"
}

# safe_path PATH: PATH and every folder above it (under --root) exist, are no symbolic
# links, belong to the user running this and cannot be written by its group or others.
safe_path() {
  local p=$1 cur=$root part
  local -a parts
  IFS=/ read -r -a parts <<<"${p#/}"
  for part in "" "${parts[@]}"; do
    [ -n "$part" ] && cur=$cur/$part
    local shown=${cur:-/}
    [ -e "$shown" ] || { say "$shown does not exist"; return 1; }
    if [ -L "$shown" ]; then say "$shown is a symbolic link: give the real path"; return 1; fi
    [ "$(stat -c %u "$shown")" = "$me" ] || { say "$shown does not belong to uid $me"; return 1; }
    if [ -n "$(find "$shown" -maxdepth 0 -perm /022)" ]; then
      say "$shown can be written by its group or others (mode $(stat -c %a "$shown"))"
      return 1
    fi
  done
}

# loads_silently LIB: the loader preloads LIB into /bin/true and /bin/sh with no message
# (a glibc older than the library needs prints "cannot be preloaded ... ignored"). With
# LIB empty: those programs start silently as the node is now (/etc/ld.so.preload).
loads_silently() {
  local out prog rc
  for prog in /bin/true "/bin/sh -c :"; do
    # shellcheck disable=SC2086  # prog is a command and its arguments
    out=$(LD_PRELOAD=$1 $prog 2>&1) && rc=0 || rc=$?
    if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
      say "$prog${1:+ with LD_PRELOAD=$1} does not start cleanly: ${out:-exit status $rc}"
      return 1
    fi
  done
}

is_shim_line() {
  local t
  t=$(printf '%s' "$1" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
  case $t in
    /*/libcudashim.so) case $t in *[[:space:]:]*) return 1 ;; esac; return 0 ;;
  esac
  return 1
}

# The lines of /etc/ld.so.preload that are not a libcudashim.so line.
other_preload_lines() {
  [ -f "$preload_file" ] || return 0
  local line
  while IFS= read -r line || [ -n "$line" ]; do
    is_shim_line "$line" || printf '%s\n' "$line"
  done <"$preload_file"
}

cmd_install_policy() {
  [ $# -eq 1 ] || usage
  local file=$1
  [ -f "$file" ] || refuse "$file is not a file"
  policy_ok "$file" || refuse "$file does not pass \`cudashim policy check\`"
  mkdir -p "$policy_dir"
  chmod 0755 "$policy_dir"
  if [ -f "$policy_file" ]; then
    cp -p "$policy_file" "$policy_file.prev.tmp" && mv -f "$policy_file.prev.tmp" "$policy_file.prev"
  fi
  write_atomically "$policy_file" 0644 <"$file"
  say "installed $file as ${policy_file}${root:+ (under $root)}"
}

cmd_rollback_policy() {
  [ $# -eq 0 ] || usage
  if [ -f "$policy_file.prev" ]; then
    mv -f "$policy_file.prev" "$policy_file"
    say "restored the previous $policy_file"
  elif [ -f "$policy_file" ]; then
    rm -f "$policy_file"
    say "removed $policy_file (there was none before it)"
  else
    say "no policy to roll back"
  fi
}

cmd_enable() {
  { [ $# -ge 1 ] && [ $# -le 2 ]; } || usage
  local lib=$1 outdir=${2:-/var/tmp/cudashim}
  case $lib in
    /*/libcudashim.so) ;;
    *) refuse "$lib: give the absolute path of a libcudashim.so" ;;
  esac
  case $lib$outdir in *[[:space:]:#]*) refuse "a path with a space, ':' or '#' cannot go in /etc/ld.so.preload" ;; esac
  case $outdir in /*) ;; *) refuse "$outdir: give an absolute folder" ;; esac
  [ -f "$root$lib" ] || refuse "$root$lib is not a file"
  if [ -f "$preload_file" ] && other_preload_lines | grep -q 'libcudashim\.so'; then
    refuse "$preload_file names libcudashim.so on a line of its own making: edit that line by hand"
  fi
  safe_path "$lib" || refuse "every process of the node, root's included, would load $lib"
  loads_silently "$root$lib" || refuse "$lib cannot be preloaded here"
  if [ -f "$policy_file" ]; then
    policy_ok "$policy_file" || refuse "the installed $policy_file does not pass the check (install-policy a good one first)"
  else
    refuse "no $policy_file: without one (output.dir) every CUDA process would write its reports into its working folder; install-policy first"
  fi

  # The reports' folder: 1777 like /tmp (each report is a 0600 file of its process's user).
  local d=$root$outdir
  if [ -e "$d" ] || [ -L "$d" ]; then
    { [ -d "$d" ] && [ ! -L "$d" ] && [ "$(stat -c %u "$d")" = "$me" ]; } ||
      refuse "$d exists and is not a folder of uid $me (someone made it first?)"
  else
    mkdir -p "$(dirname "$d")"
    mkdir "$d"
  fi
  chmod 1777 "$d"
  mkdir -p "$(dirname "$tmpfiles_conf")"
  printf '# cudashim reports (cudashim-node.sh enable): every user writes here, old ones go after 14 days\nd %s 1777 root root 14d\n' \
    "$outdir" | write_atomically "$tmpfiles_conf" 0644

  local before=
  [ -f "$preload_file" ] && before=$(cat "$preload_file")
  { printf '%s\n' "$lib"; other_preload_lines; } | write_atomically "$preload_file" 0644
  if [ -z "$root" ] && ! loads_silently ""; then
    # The node's own loader now reads the file: put the old one back at once.
    if [ -n "$before" ]; then printf '%s\n' "$before" | write_atomically "$preload_file" 0644; else rm -f "$preload_file"; fi
    refuse "processes do not start cleanly with $lib in $preload_file: put the previous file back"
  fi
  say "enabled: $lib in $preload_file, reports in $outdir"
}

cmd_disable() {
  [ $# -eq 0 ] || usage
  [ -f "$preload_file" ] || { say "no $preload_file: nothing to disable"; return 0; }
  local rest
  rest=$(other_preload_lines)
  if [ -z "$(printf '%s\n' "$rest" | sed -e 's/#.*//' -e '/^[[:space:]]*$/d')" ]; then
    rm -f "$preload_file"
    say "removed $preload_file (nothing else was in it)"
  else
    printf '%s\n' "$rest" | write_atomically "$preload_file" 0644
    say "took libcudashim.so out of $preload_file"
  fi
}

cmd_status() {
  [ $# -eq 0 ] || usage
  local line found=0
  if [ -f "$preload_file" ]; then
    while IFS= read -r line || [ -n "$line" ]; do
      if is_shim_line "$line"; then
        found=1
        echo "preload: $line"
      fi
    done <"$preload_file"
  fi
  [ "$found" = 1 ] || echo "preload: off"
  if [ -f "$policy_file" ]; then
    if policy_ok "$policy_file" 2>/dev/null; then echo "policy: $policy_file passes the check"; else echo "policy: $policy_file does NOT pass the check"; fi
  else
    echo "policy: none"
  fi
}

case $cmd in
  install-policy) cmd_install_policy "$@" ;;
  rollback-policy) cmd_rollback_policy "$@" ;;
  enable) cmd_enable "$@" ;;
  disable) cmd_disable "$@" ;;
  status) cmd_status "$@" ;;
  *) usage ;;
esac
