#!/bin/sh
# cudashim fleet: Slurm Epilog (slurm.conf: Epilog=/etc/slurm/cudashim-fleet-epilog.sh).
#
# slurmd runs it as root on each node after the job ended. It writes the job's end-of-job
# summary for node_exporter's textfile collector: `cudashim exporter --once --keep-exited 0`
# reaps the records of the node's ended processes and writes their last values as
# cudashim_job_* series; they are kept as cudashim-job-<SLURM_JOB_ID>.prom (a week, then
# removed). The running exporter (deploy/fleet/cudashim-exporter.service) would reap them
# after its --keep-exited anyway. It never fails the job: it exits 0.
dir=${CUDASHIM_FLEET_DIR:-/run/cudashim}
cli=${CUDASHIM_CLI:-/usr/local/bin/cudashim}
textfile=${CUDASHIM_TEXTFILE_DIR:-/var/lib/node_exporter/textfile_collector}
[ -x "$cli" ] && [ -d "$dir" ] && [ -d "$textfile" ] || exit 0
job=${SLURM_JOB_ID:-unknown}
tmp=$(mktemp -d 2>/dev/null) || exit 0
if "$cli" exporter --once --dir "$dir" --keep-exited 0 --textfile "$tmp" >/dev/null 2>&1 && [ -s "$tmp/cudashim.prom" ]; then
  mv -f "$tmp/cudashim.prom" "$textfile/cudashim-job-$job.prom.tmp" 2>/dev/null &&
    mv -f "$textfile/cudashim-job-$job.prom.tmp" "$textfile/cudashim-job-$job.prom" 2>/dev/null
fi
rm -rf "$tmp"
rm -f "$dir/jobs/$job" 2>/dev/null
find "$textfile" -maxdepth 1 -name 'cudashim-job-*.prom' -mtime +7 -delete 2>/dev/null
exit 0
