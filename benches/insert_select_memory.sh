#!/bin/sh
# Issue 37 item 4 / issue 38 item 3: `INSERT INTO u SELECT * FROM t` of N rows (default 1 M)
# through `rnt sql`, against `rnt import` of the same N rows into an empty `u`: wall time and
# peak RSS of each (GNU time). Both tables are keyed (`id INT PRIMARY KEY, a INT, b TEXT`).
#
#   cargo build --release -p rnt-cli
#   RNT=target/release/rnt N=1000000 benches/insert_select_memory.sh
set -eu
RNT=$(realpath "${RNT:-target/release/rnt}")
N=${N:-1000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$N" > "$work/rows.csv" <<'EOF'
import sys
n = int(sys.argv[1])
out = sys.stdout
out.write("id,a,b\n")
for i in range(n):
    out.write(f"{i},{i % 1000},name{i}\n")
EOF
schema="CREATE TABLE t (id INT PRIMARY KEY, a INT, b TEXT); CREATE TABLE u (id INT PRIMARY KEY, a INT, b TEXT);"
measure() { # label, command…
    label=$1
    shift
    /usr/bin/time -v "$@" > "$work/out" 2> "$work/time" || { cat "$work/out" "$work/time"; exit 1; }
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time")
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time")
    echo "$label: peak RSS $((rss / 1024)) MiB, wall $wall"
}
mkdir "$work/sql" "$work/import"
cd "$work/sql"
"$RNT" init > /dev/null
"$RNT" sql "$schema" > /dev/null
"$RNT" import t "$work/rows.csv" > /dev/null
# The floors under the INSERT: the process with the store open, and the SELECT's answer.
measure "SELECT count(*) FROM t" "$RNT" sql "SELECT count(*) FROM t"
measure "SELECT * FROM t ($N rows, CSV)" "$RNT" sql "SELECT * FROM t" --format csv
measure "INSERT INTO u SELECT * FROM t ($N rows)" "$RNT" sql "INSERT INTO u SELECT * FROM t"
"$RNT" sql "SELECT count(*), sum(a) FROM u"
cd "$work/import"
"$RNT" init > /dev/null
"$RNT" sql "$schema" > /dev/null
measure "rnt import u ($N rows)" "$RNT" import u "$work/rows.csv"
"$RNT" sql "SELECT count(*), sum(a) FROM u"
