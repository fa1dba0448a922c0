#!/bin/sh
# Every shell script of deploy/ (DEPLOY_DIR, the argument) passes shellcheck; skipped
# (exit 77) when shellcheck is not installed (Debian: shellcheck).
command -v shellcheck >/dev/null 2>&1 || { echo "skip: shellcheck is not installed"; exit 77; }
status=0
n=0
for f in $(find "$1" -type f \( -name '*.sh' -o -name '*.sbatch' \) | sort); do
  n=$((n + 1))
  if shellcheck "$f"; then echo "ok: $f"; else echo "FAIL: $f"; status=1; fi
done
[ "$n" -gt 0 ] || { echo "FAIL: no shell script under $1"; exit 1; }
exit $status
