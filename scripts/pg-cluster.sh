# Sourced by scripts/pg-stop.sh and scripts/pg-restart.sh: for the private test cluster in
# $dir (target/pgtest, or CLEARLEDGER_PG_DIR), sets `bin` to the binaries of its own major
# version (Debian's layout, else those on PATH) and `as_owner` to the command prefix that
# runs them as the cluster's owner (pg-start.sh makes it postgres under root).
bin=/usr/lib/postgresql/$(cat "$dir/PG_VERSION")/bin
if [ ! -x "$bin/pg_ctl" ]; then
    bin=$(dirname "$(command -v pg_ctl || echo /nonexistent/pg_ctl)")
fi
as_owner=()
if [ "$(id -u)" = 0 ]; then
    as_owner=(runuser -u "$(stat -c %U "$dir")" --)
fi
