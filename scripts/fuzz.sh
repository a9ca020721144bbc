#!/usr/bin/env bash
# Runs one coverage-guided fuzz target (cargo-fuzz, libFuzzer) for MINUTES minutes.
#
#   scripts/fuzz.sh TARGET MINUTES      e.g. scripts/fuzz.sh camt 60
#   scripts/fuzz.sh --list              the targets (fuzz/Cargo.toml; src/fuzzing/ says what each checks)
#
# Needs the nightly toolchain (`rustup toolchain install nightly`); installs cargo-fuzz from
# crates.io when it is missing. The target's corpus (fuzz/corpus/TARGET, kept between runs)
# is seeded on first use from the samples, the test corpus (CLEARLEDGER_CORPUS, else
# ../shared/corpus, else target/corpus) and fuzz/seeds/TARGET. A crash or a broken invariant
# stops the run and leaves its input in fuzz/artifacts/TARGET/ (replay it with
# `cargo +nightly fuzz run TARGET FILE`); it becomes a regression test in
# tests/it/fuzz_smoke.rs. The last line printed sums the run up (docs/reliability.md keeps
# these lines). Exit code: libFuzzer's (0: the time ran out and nothing was found).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
targets=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^clearledger-fuzz$')
if [ "${1:-}" = --list ]; then
    echo "$targets"
    exit 0
fi
if [ $# -ne 2 ] || ! grep -qx "$1" <<<"$targets" || ! [[ $2 =~ ^[0-9]+$ ]]; then
    echo "usage: scripts/fuzz.sh TARGET MINUTES (TARGET one of: $(echo $targets))" >&2
    exit 2
fi
target=$1
minutes=$2
if ! rustc +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: the nightly toolchain is missing: rustup toolchain install nightly" >&2
    exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install --locked cargo-fuzz
fi

corpus_dir=${CLEARLEDGER_CORPUS:-}
for d in ../../shared/corpus ../target/corpus; do
    if [ -z "$corpus_dir" ] && [ -d "$d" ]; then corpus_dir=$d; fi
done
# The seed files of each target: the files its reader reads (a target fuzzing the other
# readers' files too finds where detection and the readers disagree).
seeds() {
    local c=$corpus_dir
    case $1 in
    nacha_record | nacha_file) echo ../samples/*.ach "$c"/ach/valid/* "$c"/ach/invalid/* "$c"/ach/lenient/* ;;
    iso20022) echo ../samples/*.xml "$c"/iso20022/pacs008/* "$c"/iso20022/pain001/* "$c"/iso20022/invalid/* ;;
    camt) echo "$c"/iso20022/camt05[234]/* ;;
    bai2) echo "$c"/bai2/* ;;
    mt940) echo ../samples/*.sta "$c"/mt940/* "$c"/mt942/* ;;
    detect | check_vs_dry_run) echo ../samples/* "$c"/bai2/* "$c"/mt940/* "$c"/iso20022/camt053/* "$c"/ach/valid/* ;;
    *) ;;
    esac
}
mkdir -p "corpus/$target"
if [ -z "$(ls -A "corpus/$target")" ]; then
    for f in $(seeds "$target") seeds/"$target"/*; do
        # The corpus's expected-outcome files are not inputs.
        if [ -f "$f" ] && [[ $f != *expected* ]]; then
            cp "$f" "corpus/$target/$(basename "$(dirname "$f")")-$(basename "$f")"
        fi
    done
fi
mkdir -p logs
log=logs/$target-$(date -u +%Y%m%dT%H%M%SZ).log
echo "fuzz.sh: $target for $minutes min, corpus fuzz/corpus/$target ($(ls "corpus/$target" | wc -l) inputs), log fuzz/$log" >&2
# Leaks are checked after each input, but not the per-thread bookkeeping of threads still
# tearing down (lsan.supp says why).
export LSAN_OPTIONS="suppressions=$PWD/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# Built first, so that the time below is the fuzzing's alone.
cargo +nightly fuzz build "$target" >"$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
start=$(date +%s)
set +e
cargo +nightly fuzz run "$target" "corpus/$target" -- \
    -max_total_time=$((minutes * 60)) -print_final_stats=1 -rss_limit_mb=4096 >>"$log" 2>&1
code=$?
set -e
secs=$(($(date +%s) - start))
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
crashes=$(ls "artifacts/$target" 2>/dev/null | wc -l)
echo "$(date -u +%F) $target: ${secs} s, ${runs:-0} executions, coverage ${cov:-?} edges (${ft:-?} features), corpus $(ls "corpus/$target" | wc -l), artifacts $crashes, exit $code"
if [ $code -ne 0 ]; then
    # What broke and where its input is (the log has the whole report).
    grep -E "panicked|left:|right:|ERROR|Test unit written|^Failing input|artifacts/" "$log" | head -20 >&2
fi
exit $code
