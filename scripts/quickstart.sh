#!/usr/bin/env bash
# quickstart.sh: install, build, and run the bundled example under cudashim.
# On a machine without a GPU the example and the summary say so plainly.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh build >/dev/null
echo
echo "== cudashim run -- build/bin/sync_patterns =="
exec build/bin/cudashim run --out build/quickstart-run -- build/bin/sync_patterns 200
