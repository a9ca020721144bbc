#!/usr/bin/env bash
# Starts this checkout's private PostgreSQL server for the tests and prints its URL, and
# nothing else, on stdout (all the rest goes to stderr):
#   export CLEARLEDGER_TEST_PG_URL=$(scripts/pg-start.sh)
# The server is a cluster of its own under this checkout's target/pgtest (whatever
# CARGO_TARGET_DIR says), made by initdb -A trust -U clearledger (UTF8, locale C), listening
# on 127.0.0.1 only, port CLEARLEDGER_PG_PORT (default 55432), with no unix socket,
# serving TLS with a self-signed certificate it makes (openssl). The machine's own
# clusters are never used or touched, and this script gives no role a password: the
# bootstrap superuser `clearledger` logs in by trust, so any local user can reach this
# server; hold only test data in it. Any other role must prove its password (the tests make
# such roles, with random passwords, to check how a wrong one fails). Stop it with
# scripts/pg-stop.sh.
# As root the server runs as `postgres` (initdb and the server refuse root): target/pgtest
# belongs to postgres, which is given search permission on its parent directories if it
# lacks it. As any other user it runs as that user.
# PostgreSQL 13+ server binaries: /usr/lib/postgresql/*/bin (Debian, Ubuntu), else initdb
# and pg_ctl on PATH. Absent, root with apt-get installs the `postgresql` package (which
# also creates and starts the machine's `main` cluster on 5432: left alone, never used);
# anyone else is told what to install, and the script exits 1.
# The URL names the database `clearledger`, owned by the role `clearledger`, so
# `clearledger --db URL ingest FILE` works as printed; the tests use it as the admin URL from
# which they create their own databases and roles.
# CLEARLEDGER_PG_DIR puts the cluster elsewhere (a test that restarts its server makes one
# of its own there; scripts/pg-restart.sh and scripts/pg-stop.sh take the same variables).
# Idempotent: a server already running from target/pgtest is reused. Leftover test
# databases and roles (cl_test_*) from an interrupted run are dropped.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${CLEARLEDGER_PG_DIR:-$PWD/target/pgtest}
port=${CLEARLEDGER_PG_PORT:-55432}
root=
if [ "$(id -u)" = 0 ]; then
    root=yes
fi

die() {
    echo "pg-start: $*"
    exit 1
}

# The newest server binaries: Debian's versioned directories, else PATH.
find_bin() {
    local initdb
    initdb=$(for f in /usr/lib/postgresql/*/bin/initdb; do
        if [ -x "$f" ]; then echo "$f"; fi
    done | sort -V | tail -1)
    if [ -z "$initdb" ]; then
        initdb=$(command -v initdb || true)
    fi
    [ -n "$initdb" ] && [ -x "$(dirname "$initdb")/pg_ctl" ] && dirname "$initdb"
}

# Sets bin: the server binaries, installed first where root can (apt-get).
ensure_bin() {
    local want="apt-get install postgresql, or your OS's PostgreSQL 13+ server package"
    local ver old
    bin=$(find_bin || true)
    if [ -z "$bin" ] && [ -n "$root" ] && command -v apt-get >/dev/null; then
        echo "pg-start: installing PostgreSQL's server (apt-get install postgresql)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
        bin=$(find_bin || true)
    fi
    [ -n "$bin" ] || die "PostgreSQL's server binaries (initdb, pg_ctl) are missing: $want"
    ver=$("$bin/pg_ctl" --version | sed -E 's/[^0-9]*([0-9]+).*/\1/')
    [ "$ver" -ge 13 ] || die "PostgreSQL $ver is too old (13+ needed): $want"
    if [ -f "$dir/PG_VERSION" ] && [ "$(cat "$dir/PG_VERSION")" != "$ver" ]; then
        # A cluster is started by the binaries of its own major version.
        old=$(cat "$dir/PG_VERSION")
        bin=/usr/lib/postgresql/$old/bin
        [ -x "$bin/pg_ctl" ] || die "$dir is a PostgreSQL $old cluster and its binaries are gone: rm -rf $dir"
    fi
}

# initdb, pg_ctl and the server as the data directory's owner: postgres under root.
as_owner() {
    if [ -n "$root" ]; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

# postgres needs search permission on every directory above target/pgtest (from / down:
# a directory is reachable only through its parents).
grant_search() {
    local d path=
    local IFS=/
    for d in ${dir#/}; do
        path=$path/$d
        if [ -d "$path" ] && ! runuser -u postgres -- test -x "$path"; then
            echo "pg-start: giving postgres search permission on $path"
            setfacl -m u:postgres:x "$path" 2>/dev/null || chmod o+x "$path"
        fi
    done
}

# Under root, target/pgtest is postgres's and reachable by it.
prepare_for_postgres() {
    local owner
    id postgres >/dev/null 2>&1 || die "as root the server runs as the user postgres, which does not exist"
    mkdir -p "$dir"
    owner=$(stat -c %U "$dir")
    if [ ! -f "$dir/PG_VERSION" ]; then
        chown postgres: "$dir"
    elif [ "$owner" != postgres ]; then
        die "$dir belongs to $owner, not postgres: run this as $owner, or rm -rf $dir"
    fi
    grant_search
}

# Who may connect, written at every start: clearledger, the test role, is trusted and has
# no password; any other role proves its password (SCRAM), so that the tests can check how
# a wrong one fails on roles of their own (random passwords, dropped after the test). And a
# self-signed certificate, so that they can check TLS.
configure() {
    as_owner tee "$dir/pg_hba.conf" >/dev/null <<'HBA'
# Written by scripts/pg-start.sh at every start.
local all all                trust
host  all clearledger 127.0.0.1/32 trust
host  all all         127.0.0.1/32 scram-sha-256
HBA
    if [ ! -f "$dir/server.key" ]; then
        if command -v openssl >/dev/null; then
            as_owner openssl req -new -x509 -days 3650 -nodes -subj /CN=clearledger-test \
                -keyout "$dir/server.key" -out "$dir/server.crt" 2>/dev/null
            as_owner chmod 600 "$dir/server.key"
        else
            echo "pg-start: openssl is missing, so the server has no TLS (the TLS test fails)"
        fi
    fi
}

# The cluster, made once, and its server running on $port.
ensure_server() {
    local running opts
    if [ -n "$root" ]; then
        prepare_for_postgres
    fi
    if [ ! -f "$dir/PG_VERSION" ]; then
        mkdir -p "$dir"
        chmod 700 "$dir"
        as_owner "$bin/initdb" -D "$dir" -A trust -U clearledger -E UTF8 --locale=C
    fi
    configure
    # TCP on 127.0.0.1 only: every client connects there, and no Unix socket means no
    # socket path under the checkout, which a long checkout path would make too long.
    opts="-p $port -c unix_socket_directories='' -c listen_addresses=127.0.0.1 -c password_encryption=scram-sha-256"
    if [ -f "$dir/server.key" ]; then
        opts="$opts -c ssl=on"
    fi
    if as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
        running=$(sed -n 4p "$dir/postmaster.pid")
        [ "$running" = "$port" ] ||
            die "the server of $dir runs on port $running, not $port: set CLEARLEDGER_PG_PORT=$running, or stop it (scripts/pg-stop.sh)"
        as_owner "$bin/pg_ctl" -D "$dir" -s reload
    elif ! as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/log" -w -o "$opts" start; then
        tail -5 "$dir/log" || true
        die "the server of $dir did not start on port $port (its log: $dir/log)"
    fi
}

psql_() {
    "$bin/psql" -qAt -h 127.0.0.1 -p "$port" -U clearledger -d postgres "$@"
}

# The database the URL names, owned by the role (CREATE DATABASE cannot run inside a DO
# block: \gexec runs it only when it is missing; the owner is set either way).
ensure_database() {
    psql_ -v ON_ERROR_STOP=1 <<'SQL'
SELECT 'CREATE DATABASE clearledger OWNER clearledger'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'clearledger')\gexec
ALTER DATABASE clearledger OWNER TO clearledger;
SQL
}

# The names cl_test_PID_N (column $1 of $2) whose test process PID is gone: what an
# interrupted run left behind (a suite running beside this one keeps its own).
leftovers() {
    local name pid
    for name in $(psql_ -c "SELECT $1 FROM $2 WHERE $1 LIKE 'cl\_test\_%'" 2>/dev/null || true); do
        pid=$(echo "$name" | cut -d_ -f3)
        # Gone, not merely another user's (which kill -0 cannot signal): /proc says.
        if [ -z "$pid" ] || { [ ! -e "/proc/$pid" ] && ! kill -0 "$pid" 2>/dev/null; }; then
            echo "$name"
        fi
    done
}

# A server started before its TLS settings existed (reused as it runs) keeps ssl = off
# until it restarts; restarting it here would cut off a suite running beside this one.
check_tls() {
    if [ -f "$dir/server.key" ] && [ "$(psql_ -c 'SHOW ssl')" != on ]; then
        echo "pg-start: the running server has no TLS yet (the TLS test fails): restart it with scripts/pg-stop.sh, then this script"
    fi
}

# Databases first: a role of the tests owns the database of its name.
drop_leftovers() {
    local name
    for name in $(leftovers datname pg_database); do
        psql_ -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" || true
    done
    for name in $(leftovers rolname pg_roles); do
        psql_ -c "DROP ROLE IF EXISTS \"$name\"" || true
    done
}

# Everything but the URL goes to stderr, so that $(pg-start.sh) is the URL alone; and no
# descriptor of that stdout reaches the server, which would hold $(...) open for its life.
{
    ensure_bin
    ensure_server
    ensure_database
    check_tls
    drop_leftovers
} >&2
echo "postgres://clearledger@127.0.0.1:$port/clearledger"
