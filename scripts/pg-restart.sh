#!/usr/bin/env bash
# Restarts the private test server of scripts/pg-start.sh (target/pgtest, or
# CLEARLEDGER_PG_DIR), as an administrator or a failover would, with the options it was
# started with:
#   scripts/pg-restart.sh fast        sessions ended, a clean shutdown, then a start
#   scripts/pg-restart.sh immediate   every process killed at once (a crash: the start
#                                     replays the WAL)
# Waits until the server accepts connections again. For the tests of a database restarted
# under load (tests/it/http_faults.rs), which run one server of their own.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${CLEARLEDGER_PG_DIR:-$PWD/target/pgtest}
mode=${1:-}
if [ "$mode" != fast ] && [ "$mode" != immediate ]; then
    echo "usage: scripts/pg-restart.sh fast|immediate" >&2
    exit 2
fi
[ -f "$dir/PG_VERSION" ] || { echo "pg-restart: no cluster in $dir" >&2; exit 1; }
. "$PWD/scripts/pg-cluster.sh"
cd /
"${as_owner[@]}" "$bin/pg_ctl" -D "$dir" -m "$mode" -w -l "$dir/log" restart >/dev/null
