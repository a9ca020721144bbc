#!/usr/bin/env bash
# Starts a PostgreSQL server for the tests and prints the line to eval:
#   export CLEARLEDGER_TEST_PG_URL=postgres://...
# As root on a Debian machine with PostgreSQL installed: the packaged cluster
# (pg_ctlcluster), with a `clearledger` login role (password `clearledger`, CREATEDB).
# As another user: a private cluster under target/pgtest (initdb, trust auth, port 55432).
# Either way the URL names the database `clearledger`, owned by the role `clearledger`, so
# `clearledger --db URL ingest FILE` works as printed (PostgreSQL 15 grants CREATE on
# schema public to a database's owner only, so `postgres` would refuse the tables); the
# tests use it as the admin URL from which they create their own databases.
# Idempotent: a server already running is reused. Leftover test databases (cl_test_*)
# from an interrupted run are dropped.
set -euo pipefail
cd "$(dirname "$0")/.."

ver=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$ver" ]; then
    echo "pg-start: PostgreSQL is not installed (no /usr/lib/postgresql/*)" >&2
    exit 1
fi
bin=/usr/lib/postgresql/$ver/bin

if [ "$(id -u)" = 0 ] && command -v pg_ctlcluster >/dev/null; then
    if ! pg_lsclusters -h | awk '{print $1"/"$2}' | grep -qx "$ver/main"; then
        pg_createcluster "$ver" main >&2
    fi
    port=$(pg_lsclusters -h | awk -v v="$ver" '$1==v && $2=="main" {print $3}')
    if ! pg_lsclusters -h | awk -v v="$ver" '$1==v && $2=="main" {print $4}' | grep -q online; then
        pg_ctlcluster "$ver" main start >&2
    fi
    for _ in $(seq 1 60); do
        pg_isready -q -h 127.0.0.1 -p "$port" && break
        sleep 0.5
    done
    runuser -u postgres -- psql -q -p "$port" -v ON_ERROR_STOP=1 >&2 <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'clearledger') THEN
    CREATE ROLE clearledger LOGIN CREATEDB PASSWORD 'clearledger';
  END IF;
END $$;
SQL
    psqlcmd=(runuser -u postgres -- psql -qAt -p "$port")
    url="postgres://clearledger:clearledger@127.0.0.1:$port/clearledger"
else
    dir=$PWD/target/pgtest
    port=55432
    if [ ! -f "$dir/PG_VERSION" ]; then
        mkdir -p "$dir"
        "$bin/initdb" -D "$dir" -A trust -U clearledger >&2
    fi
    if ! "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
        "$bin/pg_ctl" -D "$dir" -l "$dir/log" -w \
            -o "-p $port -k $dir -c listen_addresses=127.0.0.1" start >&2
    fi
    psqlcmd=(psql -qAt -h 127.0.0.1 -p "$port" -U clearledger)
    url="postgres://clearledger@127.0.0.1:$port/clearledger"
fi

# The database the URL names, owned by the role (CREATE DATABASE cannot run inside a DO
# block: \gexec runs it only when it is missing; the owner is set either way).
"${psqlcmd[@]}" -d postgres -v ON_ERROR_STOP=1 >&2 <<'SQL'
SELECT 'CREATE DATABASE clearledger OWNER clearledger'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'clearledger')\gexec
ALTER DATABASE clearledger OWNER TO clearledger;
SQL

# Drop the databases an interrupted run left behind: cl_test_PID_N whose test process PID
# is gone (a suite running beside this one keeps its databases).
for db in $("${psqlcmd[@]}" -d postgres -c "SELECT datname FROM pg_database WHERE datname LIKE 'cl\_test\_%'" 2>/dev/null || true); do
    pid=$(echo "$db" | cut -d_ -f3)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        continue
    fi
    "${psqlcmd[@]}" -d postgres -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >&2 || true
done

echo "export CLEARLEDGER_TEST_PG_URL=$url"
