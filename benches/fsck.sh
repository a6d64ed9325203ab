#!/usr/bin/env bash
# `rnt fsck` of a clean store at two sizes (release build): time against chunks and bytes
# checked, to show that a check costs time proportional to the store (issue 27).
# Each store: orders(id, customer, amount) with a per-customer count view, imported from
# CSV, then 20 commits of 100 changes. fsck runs 3 times per store (warm page cache);
# the table gives the median and the time per MiB and per 1000 chunks.
# Usage: benches/fsck.sh [ROWS...]   (default: 200000 2000000)
set -euo pipefail

SIZES=("$@")
if [ ${#SIZES[@]} -eq 0 ]; then SIZES=(200000 2000000); fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)

cargo build --release -p rnt-cli --manifest-path "$ROOT/Cargo.toml" >&2
RNT="$ROOT/target/release/rnt"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rnt-fsck-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '| rows | chunks | MiB checked | store MiB | fsck ms (median of 3) | ms per MiB | ms per 1000 chunks |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|\n'
for ROWS in "${SIZES[@]}"; do
    DIR="$WORK/$ROWS"
    mkdir -p "$DIR" && cd "$DIR"
    awk -v n="$ROWS" 'BEGIN {
        print "id,customer,amount";
        for (i = 0; i < n; i++) printf "%d,%d,%d\n", i, (i * 7919) % 100000, (i * 104729) % 10000;
    }' > orders.csv
    "$RNT" init > /dev/null
    printf 'relation orders(id: int, customer: int, amount: int).\nview per_customer(c: int, n: int).\nper_customer(c, count()) :- orders(_, c, _).\n' > shop.rnt
    "$RNT" define shop.rnt > /dev/null
    "$RNT" import orders orders.csv > /dev/null
    for c in $(seq 1 20); do
        awk -v c="$c" -v n="$ROWS" 'BEGIN {
            for (j = 0; j < 100; j++) printf "+orders(%d, %d, %d)\n", n + c * 100 + j, j, c;
        }' > changes.txt
        "$RNT" commit -m "tick $c" -f changes.txt > /dev/null
    done
    : > fsck_ms
    for _ in 1 2 3; do
        start=$(now_ns)
        "$RNT" fsck --format json > fsck.json
        end=$(now_ns)
        echo $(( (end - start) / 1000000 )) >> fsck_ms
    done
    ms=$(median < fsck_ms)
    chunks=$(grep -m1 '"chunks"' fsck.json | tr -dc '0-9')
    bytes=$(grep -m1 '"bytes"' fsck.json | tr -dc '0-9')
    store_kib=$(du -sk .rnt | cut -f1)
    awk -v rows="$ROWS" -v chunks="$chunks" -v bytes="$bytes" -v kib="$store_kib" -v ms="$ms" 'BEGIN {
        mib = bytes / 1048576;
        printf "| %d | %d | %.1f | %.1f | %d | %.2f | %.2f |\n", rows, chunks, mib, kib / 1024, ms, ms / mib, ms * 1000 / chunks;
    }'
    cd "$WORK"
done
