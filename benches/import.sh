#!/usr/bin/env bash
# End-to-end benchmark of the `rnt` binary (release build):
#   1. import 1M rows of orders(id: int, customer: int, amount: int) from CSV: rows/s;
#   2. commits of 100 changes (50 deletes, 50 inserts) against the 1M-row relation:
#      median wall time per commit (the whole process: start, open, commit, flush) and
#      median tree work from `rnt commit --stats`.
# Usage: benches/import.sh [ROWS] [COMMITS]   (defaults 1000000 and 11)
# Record the figures in docs/bench-history.md.
set -euo pipefail

ROWS=${1:-1000000}
COMMITS=${2:-11}
CHANGES_PER_COMMIT=100
ROOT=$(cd "$(dirname "$0")/.." && pwd)

cargo build --release -p rnt-cli --manifest-path "$ROOT/Cargo.toml" >&2
RNT="$ROOT/target/release/rnt"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rnt-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

awk -v n="$ROWS" 'BEGIN {
    print "id,customer,amount";
    for (i = 0; i < n; i++) printf "%d,%d,%d\n", i, (i * 7919) % 100000, (i * 104729) % 10000;
}' > orders.csv
CSV_BYTES=$(stat -c %s orders.csv)

"$RNT" init > /dev/null
printf 'relation orders(id: int, customer: int, amount: int).\n' > shop.rnt
"$RNT" define shop.rnt > /dev/null

start=$(now_ns)
"$RNT" import orders orders.csv --stats > import.out
end=$(now_ns)
import_ms=$(( (end - start) / 1000000 ))
rows_per_s=$(( ROWS * 1000 / (import_ms > 0 ? import_ms : 1) ))
import_stats=$(grep -m1 '^stats: nodes_written' import.out)
store_kib=$(du -sk .rnt | cut -f1)

: > commit_ms
: > nodes_written
: > nodes_read
: > entries_read
for c in $(seq 1 "$COMMITS"); do
    # Delete 50 present rows, insert 50 new ones (ids past the imported range).
    awk -v c="$c" -v n="$ROWS" -v k="$CHANGES_PER_COMMIT" 'BEGIN {
        srand(c);
        for (j = 0; j < k / 2; j++) {
            i = (c * 1000003 + j * 19997) % n;
            printf "-orders(%d, %d, %d)\n", i, (i * 7919) % 100000, (i * 104729) % 10000;
            printf "+orders(%d, %d, %d)\n", n + c * k + j, j, c;
        }
    }' > changes.txt
    start=$(now_ns)
    "$RNT" commit -m "bench $c" -f changes.txt --stats > commit.out
    end=$(now_ns)
    echo $(( (end - start) / 1000 )) >> commit_ms
    stats=$(grep -m1 '^stats: nodes_written' commit.out)
    sed -E 's/.*nodes_written=([0-9]+).*/\1/' <<< "$stats" >> nodes_written
    sed -E 's/.*nodes_read=([0-9]+).*/\1/' <<< "$stats" >> nodes_read
    sed -E 's/.*entries_read=([0-9]+).*/\1/' <<< "$stats" >> entries_read
done

# Baseline: a process that opens the store and reads the head (`rnt status`).
: > status_ms
for _ in $(seq 1 "$COMMITS"); do
    start=$(now_ns)
    "$RNT" status > /dev/null
    end=$(now_ns)
    echo $(( (end - start) / 1000 )) >> status_ms
done

commit_us=$(median < commit_ms)
status_us=$(median < status_ms)
printf 'rows                     %d (%d bytes of CSV)\n' "$ROWS" "$CSV_BYTES"
printf 'import                   %d ms, %d rows/s (%s)\n' "$import_ms" "$rows_per_s" "$import_stats"
printf 'store size after import  %d KiB\n' "$store_kib"
printf 'commit of %d changes    median %d.%03d ms over %d commits (min %s us, max %s us)\n' \
    "$CHANGES_PER_COMMIT" $((commit_us / 1000)) $((commit_us % 1000)) "$COMMITS" \
    "$(sort -n commit_ms | head -1)" "$(sort -n commit_ms | tail -1)"
printf 'baseline (rnt status)    median %d.%03d ms (process start, store open, head read)\n' \
    $((status_us / 1000)) $((status_us % 1000))
printf 'commit tree work         median nodes_written=%s nodes_read=%s entries_read=%s\n' \
    "$(median < nodes_written)" "$(median < nodes_read)" "$(median < entries_read)"
