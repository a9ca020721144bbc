#!/usr/bin/env bash
# The whole test suite: unit, corpus and integration tests against real SQLite files and
# a real PostgreSQL server, which this script starts (scripts/pg-start.sh) when
# CLEARLEDGER_TEST_PG_URL is not already set.
#
#   CLEARLEDGER_LONG_TESTS=1    also run the long variants (1 M-entry files; #[ignore]d tests)
#   CLEARLEDGER_CORPUS=DIR      where the test corpus is (else ../shared/corpus, else
#                               target/corpus; absent, scripts/fetch-corpus.sh fetches it)
#   CLEARLEDGER_TEST_PG_URL=URL use this PostgreSQL server instead of starting one
#   CLEARLEDGER_TEST_CITUS_URL=URL  also run the PostgreSQL suites and the Citus tests on this
#                               Citus coordinator (docs/citus.md: a coordinator and two workers)
#   CLEARLEDGER_PG_PORT=PORT    the port of the server pg-start.sh starts (default 55432)
set -euo pipefail
cd "$(dirname "$0")/.."
# PostgreSQL first, before any build: without it the suite cannot pass, and pg-start.sh
# installs it or says in one line what to install.
if [ -z "${CLEARLEDGER_TEST_PG_URL:-}" ]; then
    CLEARLEDGER_TEST_PG_URL=$(./scripts/pg-start.sh) || exit 1
fi
export CLEARLEDGER_TEST_PG_URL
# The corpus, where the tests look for it (src/test_support.rs), fetched when absent: a test
# without its files fails rather than passes. target/corpus is completed too, should a fetch
# have been cut short (the files already there are only hashed).
corpus=
if [ -n "${CLEARLEDGER_CORPUS:-}" ]; then
    if [ -d "$CLEARLEDGER_CORPUS" ]; then corpus=$CLEARLEDGER_CORPUS; fi
else
    for d in ../shared/corpus target/corpus; do
        if [ -z "$corpus" ] && [ -d "$d" ]; then corpus=$d; fi
    done
fi
if [ -z "$corpus" ] || [ "$corpus" = target/corpus ]; then
    absent="test.sh: the test corpus is absent (looked in \$CLEARLEDGER_CORPUS, ../shared/corpus, target/corpus): run scripts/fetch-corpus.sh, or set CLEARLEDGER_CORPUS"
    if [ -z "$corpus" ]; then echo "$absent" >&2; fi
    ./scripts/fetch-corpus.sh "${CLEARLEDGER_CORPUS:-target/corpus}" || {
        echo "$absent" >&2
        exit 1
    }
fi
# The outside tools the HTTP tests drive the server with: schemathesis and promtool.
./scripts/tools.sh || exit 1
# House style first: formatted, and no clippy warning (clippy.toml: a function fits a screen).
cargo fmt --check
cargo clippy --locked --all-targets -- -D warnings
# The fuzz targets (fuzz/, run with scripts/fuzz.sh on nightly) compile on stable too: checked
# here so that none rots unseen; what each one checks runs in tests/it/fuzz_smoke.rs.
(cd fuzz && cargo check --locked --quiet)
cargo test --locked --all-targets "$@"
# The long variants are #[ignore]d tests (counted as ignored, never as passed): a second pass.
if [ "${CLEARLEDGER_LONG_TESTS:-}" = 1 ]; then
    cargo test --locked --tests "$@" -- --ignored --skip citus::
fi
# On a Citus cluster: every test named `postgres` again (a database of its own on every node each),
# then the Citus tests, #[ignore]d elsewhere. Two tests are left to the plain pass: they check
# the TLS and the password authentication scripts/pg-start.sh's server is set up with, which a
# given cluster need not have.
if [ -n "${CLEARLEDGER_TEST_CITUS_URL:-}" ]; then
    CLEARLEDGER_TEST_PG_URL=$CLEARLEDGER_TEST_CITUS_URL cargo test --locked --test it "$@" -- \
        postgres --skip postgres::tls_from_the_url \
        --skip postgres::the_password_may_come_from_pgpassword
    # One at a time: one of them stops a worker of the cluster.
    CLEARLEDGER_TEST_PG_URL=$CLEARLEDGER_TEST_CITUS_URL cargo test --locked --test it "$@" -- \
        --ignored citus:: --test-threads=1
fi
