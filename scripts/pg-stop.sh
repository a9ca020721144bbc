#!/usr/bin/env bash
# Stops the private test server that scripts/pg-start.sh runs from target/pgtest, whatever
# its port; its data stays for the next start (rm -rf target/pgtest drops it). The machine's
# own clusters are never touched. No server running there is not an error.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${CLEARLEDGER_PG_DIR:-$PWD/target/pgtest}

if [ ! -f "$dir/PG_VERSION" ]; then
    echo "pg-stop: no cluster in $dir" >&2
    exit 0
fi
. "$PWD/scripts/pg-cluster.sh"
cd /
if ! "${as_owner[@]}" "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    echo "pg-stop: no server running from $dir" >&2
    exit 0
fi
"${as_owner[@]}" "$bin/pg_ctl" -D "$dir" -m fast -w stop >&2
