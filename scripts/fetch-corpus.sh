#!/usr/bin/env bash
# Fetches the test corpus into DIR (default target/corpus, where the tests look when neither
# CLEARLEDGER_CORPUS nor ../shared/corpus is there; src/test_support.rs):
#   scripts/fetch-corpus.sh [DIR]
# Each line of scripts/corpus.tsv names one file: dest (under DIR), repository (owner/name),
# full commit, path in that repository and SHA-256, tab-separated. The file comes from
# $CLEARLEDGER_CORPUS_BASE/OWNER/NAME/COMMIT/PATH (default https://raw.githubusercontent.com;
# a file:// tree laid out the same way works too) and must have that SHA-256. A file already
# there with its hash is not fetched again. A download lands in DEST.part and is renamed only
# once its hash is right, so DIR never holds a partial or a wrong file. Every file that could
# not be had is named, and the script then exits 1.
# tests/it/corpus_list.rs keeps the list true: every corpus file listed, every hash right.
set -euo pipefail
dir=${1:-target/corpus}
case $dir in
/*) ;;
*) [ $# -eq 0 ] || dir=$PWD/$dir ;;
esac
cd "$(dirname "$0")/.."
base=${CLEARLEDGER_CORPUS_BASE:-https://raw.githubusercontent.com}
list=scripts/corpus.tsv

sha256() {
    if command -v sha256sum >/dev/null; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

part=
trap 'rm -f "$part"' EXIT
fetched=0
kept=0
failed=0
while IFS=$'\t' read -r dest repo commit path want; do
    out=$dir/$dest
    if [ -f "$out" ]; then
        if [ "$(sha256 "$out")" = "$want" ]; then
            kept=$((kept + 1))
            continue
        fi
        echo "fetch-corpus: $dest: not the listed file, fetched again" >&2
        rm -f "$out"
    fi
    if ! command -v curl >/dev/null; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "fetch-corpus: installing curl" >&2
            apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >&2
        fi
        command -v curl >/dev/null || { echo "fetch-corpus: curl is missing (apt-get install curl)" >&2; exit 1; }
    fi
    url=$base/$repo/$commit/$path
    part=$out.part
    mkdir -p "$(dirname "$out")"
    got=
    if ! curl -fsSL --retry 3 --connect-timeout 30 --max-time 300 -o "$part" "$url"; then
        echo "fetch-corpus: $dest: could not download $url" >&2
    else
        got=$(sha256 "$part")
        [ "$got" = "$want" ] || echo "fetch-corpus: $dest: sha256 $got, not $want as listed ($url)" >&2
    fi
    if [ "$got" = "$want" ]; then
        mv -f "$part" "$out"
        fetched=$((fetched + 1))
    else
        rm -f "$part"
        failed=$((failed + 1))
        # Three failures and no success: the source is out of reach, not one file amiss.
        if [ "$failed" -ge 3 ] && [ "$fetched" -eq 0 ]; then
            echo "fetch-corpus: stopped: no file could be had from $base" >&2
            break
        fi
    fi
done <"$list"

echo "fetch-corpus: $dir: $fetched fetched, $kept already there, $failed failed" >&2
if [ "$failed" -ne 0 ]; then
    # No empty directories left behind: a fetch that got nothing leaves no corpus to find.
    find "$dir" -depth -type d -empty -delete 2>/dev/null || true
    exit 1
fi
