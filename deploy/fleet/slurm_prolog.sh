#!/bin/sh
# cudashim fleet: Slurm Prolog (slurm.conf: Prolog=/etc/slurm/cudashim-fleet-prolog.sh).
#
# slurmd runs it as root on each node of the job before its first step. It makes the node's
# runtime folder the preloaded processes write their fleet records in (sticky and writable by
# every user, as /tmp) and records which GPUs the job holds, so that a dashboard joins the
# job id with dcgm-exporter's gpu label: /run/cudashim/jobs/<SLURM_JOB_ID> holds
# SLURM_JOB_GPUS (NVML indices, as dcgm-exporter's `gpu`). It never fails the job: it exits 0.
# The job's processes write there when fleet.dir is auto and XDG_RUNTIME_DIR is unset, or
# with CUDASHIM_FLEET_DIR=/run/cudashim (deploy/slurm/task_prolog.sh's environment, or
# fleet.dir in /etc/cudashim/policy.toml).
dir=${CUDASHIM_FLEET_DIR:-/run/cudashim}
mkdir -p "$dir" 2>/dev/null && chmod 1777 "$dir" 2>/dev/null
if [ -n "${SLURM_JOB_ID:-}" ] && mkdir -p "$dir/jobs" 2>/dev/null; then
  chmod 0755 "$dir/jobs" 2>/dev/null
  printf 'SLURM_JOB_ID=%s\nSLURM_JOB_UID=%s\nSLURM_JOB_GPUS=%s\n' "$SLURM_JOB_ID" "${SLURM_JOB_UID:-}" \
    "${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}" > "$dir/jobs/$SLURM_JOB_ID" 2>/dev/null
fi
exit 0
