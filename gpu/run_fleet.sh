#!/usr/bin/env bash
# run_fleet.sh: issue 34 on the GPU host: a real Prometheus scrapes `cudashim exporter` every
# second while a real torch job (gpu/realworld/dataloader_workers.py, clean) and its planted
# form (--planted: pageable non_blocking copies, copy.async-from-pageable) run under the shim
# side by side for FLEET_JOB_S seconds each (then SIGTERM: the shim writes the report and the
# record's last state); then Prometheus's /api/v1/query answers for the idle share, its
# diagnosis and the findings are written beside each job's own report:
#   $OUT/clean/, $OUT/planted/   each job's cudashim report (and stream, trace)
#   $OUT/prometheus.json         what Prometheus returned, query by query
#   $OUT/table.md                per job: idle share and diagnosis, findings (calls, blocked s),
#                                Prometheus's value beside the report's
# Needs: CLI (the wheel's cudashim), the carried Prometheus at .carry/gpu/prometheus/prometheus
# (Debian's package: .deps/prometheus/usr/bin/prometheus after scripts/setup.sh --tests).
# FLEET_CLEAN / FLEET_PLANTED replace the two job command lines (a CPU dry run uses test doubles).
# About 75 s.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/cudashim-fleet}
CLI=${CLI:?CLI: the cudashim executable}
PROM=${PROM:-.carry/gpu/prometheus/prometheus}
JOB_S=${FLEET_JOB_S:-45}
CLEAN=${FLEET_CLEAN:-python3 gpu/realworld/dataloader_workers.py --steps 20000}
PLANTED=${FLEET_PLANTED:-python3 gpu/realworld/dataloader_workers.py --planted --steps 20000}
[ -x "$PROM" ] || { echo "run_fleet: no Prometheus at $PROM (copy .deps/prometheus/usr/bin/prometheus there)" >&2; exit 1; }
mkdir -p "$OUT/records" "$OUT/tsdb"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
"$CLI" exporter --dir "$OUT/records" --listen 127.0.0.1 --port 0 --keep-exited 600 2> "$OUT/exporter.log" &
EXP=$!
for _ in $(seq 50); do grep -q '/metrics' "$OUT/exporter.log" && break; sleep 0.1; done
EXP_PORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$OUT/exporter.log" | head -n 1)
PROM_PORT=$(free_port)
cat > "$OUT/prometheus.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: cudashim
    static_configs: [{targets: ['127.0.0.1:$EXP_PORT']}]
YML
"$PROM" --config.file="$OUT/prometheus.yml" --storage.tsdb.path="$OUT/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" > "$OUT/prometheus.log" 2>&1 &
PROMPID=$!
export CUDASHIM_FLEET_DIR=$OUT/records
pids=()
for form in clean planted; do
  cmd=$CLEAN; [ $form = planted ] && cmd=$PLANTED
  # shellcheck disable=SC2086  # the job's command line, word-split on purpose
  SLURM_JOB_ID=fleet-$form timeout -s TERM -k 10 "$JOB_S" "$CLI" run --quiet --out "$OUT/$form" -- $cmd \
    > "$OUT/$form.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
# fleet_table.py waits for the scrape of the last records
python3 gpu/fleet_table.py --prometheus "http://127.0.0.1:$PROM_PORT" --out "$OUT" clean planted
rc=$?
kill "$PROMPID" "$EXP" 2>/dev/null
wait "$PROMPID" "$EXP" 2>/dev/null
exit $rc
