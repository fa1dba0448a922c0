#!/bin/sh
# cudashim's Slurm TaskProlog (slurm.conf: TaskProlog=/etc/slurm/cudashim-task-prolog.sh).
#
# slurmstepd runs it once per task, as the job's user, with the task's environment, and
# applies what it prints on stdout: "export NAME=value" (the value is the rest of the
# line, taken as it is: no quoting) and "unset NAME". For each task it prints
#   export LD_PRELOAD=<the shim>[:<the task's own LD_PRELOAD>]
#   export CUDASHIM_OUT=<base>/<user>/job-<SLURM_JOB_ID>/step-<SLURM_STEP_ID>/rank-<SLURM_PROCID>
# and nothing it is not sure of. It never fails a task: it always exits 0, runs no
# program but id, mkdir and chmod, and writes nothing on stderr.
#
# Settings (edit the defaults below; the job's environment can override both):
#   CUDASHIM_LIB             the preload library, an absolute path readable on the node.
#                            Missing or unreadable: nothing is preloaded.
#   CUDASHIM_SLURM_OUT_BASE  a node-local folder for the reports, made by the administrator
#                            with mode 1777 (deploy/node/tmpfiles.d-cudashim.conf). Missing:
#                            CUDASHIM_OUT is not set (the policy's output.dir applies).
# What the job's environment decides:
#   CUDASHIM_NO_PRELOAD=1    (or CUDASHIM_DISABLE=1) opts out: nothing is added, and a shim
#                            inherited from the batch step is taken out of LD_PRELOAD.
#   LD_PRELOAD               already naming a libcudashim.so (the same one, inherited from
#                            the batch step, or the user's own): left as it is, never a
#                            second shim.
#   CUDASHIM_OUT             set to a folder outside the base: the user's choice, kept. One
#                            inside the base was set by this prolog for the batch step and
#                            is replaced by the step's own.
# The shim creates only the last folder of CUDASHIM_OUT (mode 0700), so this prolog makes
# <base>/<user> (0700, checked to be a real folder of the user) and the job and step
# folders; the rank folder appears when a process of that rank first uses CUDA.

CUDASHIM_LIB=${CUDASHIM_LIB:-/opt/cudashim/site/cudashim/lib/libcudashim.so}
CUDASHIM_SLURM_OUT_BASE=${CUDASHIM_SLURM_OUT_BASE:-/var/tmp/cudashim}

PATH=/usr/bin:/bin
umask 077
exec 2>/dev/null
# slurmstepd starts this script with the task's environment, LD_PRELOAD included: the
# programs it runs get none.
task_preload=${LD_PRELOAD:-}
unset LD_PRELOAD

# slurmstepd reads this output in lines of at most 4 KiB; a longer line would be cut.
max_line=4000

truthy() {
  case $1 in
    1 | [Tt][Rr][Uu][Ee] | [Yy][Ee][Ss] | [Oo][Nn]) return 0 ;;
  esac
  return 1
}

is_shim() {
  case $1 in
    libcudashim.so | */libcudashim.so) return 0 ;;
  esac
  return 1
}

# A folder name made from an id: letters, digits, '_' and '-' only.
safe_id() {
  case $1 in
    '' | *[!A-Za-z0-9_-]*) return 1 ;;
  esac
  return 0
}

# export NAME VALUE: one line, unless the value cannot travel in one.
export_line() {
  case $2 in
    *'
'*) return 1 ;;
  esac
  line="export $1=$2"
  [ "${#line}" -le "$max_line" ] || return 1
  printf '%s\n' "$line"
}

# The loader splits LD_PRELOAD at spaces and colons. Sets has_shim (1 when an entry is a
# libcudashim.so) and others (the other entries, joined with ':').
has_shim=0
others=
set -f
old_ifs=$IFS
IFS=' :'
for entry in $task_preload; do
  [ -n "$entry" ] || continue
  if is_shim "$entry"; then
    has_shim=1
  else
    others=${others:+$others:}$entry
  fi
done
IFS=$old_ifs
set +f

if truthy "${CUDASHIM_NO_PRELOAD:-}" || truthy "${CUDASHIM_DISABLE:-}"; then
  if [ "$has_shim" = 1 ]; then
    if [ -n "$others" ]; then
      export_line LD_PRELOAD "$others" || :  # too long for one line: left as it is
    else
      printf 'unset LD_PRELOAD\n'
    fi
  fi
  exit 0
fi

if [ "$has_shim" = 0 ]; then
  case $CUDASHIM_LIB in
    /*) ;;
    *) exit 0 ;;  # a relative path would be read from each process's working folder
  esac
  [ -f "$CUDASHIM_LIB" ] && [ -r "$CUDASHIM_LIB" ] || exit 0
  export_line LD_PRELOAD "$CUDASHIM_LIB${task_preload:+:$task_preload}" || exit 0
fi

# CUDASHIM_OUT: the user's own choice stays.
base=$CUDASHIM_SLURM_OUT_BASE
case ${CUDASHIM_OUT:-} in
  '' | "$base"/*) ;;
  *) exit 0 ;;
esac
case $base in
  /*) ;;
  *) exit 0 ;;
esac
job=${SLURM_JOB_ID:-}
step=${SLURM_STEP_ID:-batch}
rank=${SLURM_PROCID:-0}
user=$(id -un) || user=
safe_id "$user" || user=$(id -u) || exit 0
safe_id "$job" && safe_id "$step" && safe_id "$rank" && safe_id "$user" || exit 0
[ -d "$base" ] && [ ! -L "$base" ] || exit 0

mine=$base/$user
[ -e "$mine" ] || [ -L "$mine" ] || mkdir -m 0700 "$mine" || exit 0
# Another user may have made it first (the base is 1777): it must be a folder of ours.
[ -d "$mine" ] && [ ! -L "$mine" ] && [ -O "$mine" ] || exit 0
chmod 0700 "$mine" || exit 0
mkdir -p "$mine/job-$job/step-$step" || exit 0
export_line CUDASHIM_OUT "$mine/job-$job/step-$step/rank-$rank"
exit 0
