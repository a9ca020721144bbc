#!/usr/bin/env bash
# The whole test suite: unit, corpus and integration tests against real SQLite files.
# Starts whatever the tests need (today: nothing; SQLite is embedded).
#
#   CLEARLEDGER_LONG_TESTS=1   also run the long variants (1 M-entry files)
#   CLEARLEDGER_CORPUS=DIR     where the shared corpus is (default ../shared/corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked --all-targets "$@"
