#!/usr/bin/env bash
# Issue 38's comparison of large commits: the ticks rnt's commit bench kept, replayed
# through dbsp 0.349 (1 and 2 workers; the workload's views in one circuit, then each
# alone) and applied to DuckDB 2.0.1 recomputing the views; then the checksums of rnt's
# CLI store after the same ticks, to compare with theirs. One engine at a time, for each
# workload (W1–W4, W5–W9) the folder has ticks of.
#
# Usage:
#   benches/large_commit.sh FOLDER            a work folder kept by RNT_BENCH_KEEP=1 (or
#                                             written by rnt-bench-ticks: no rnt store then)
#   benches/large_commit.sh --generate W N T  first run the commit bench for workload W (W1
#                                             or W5) with T ticks of N order changes (N=0:
#                                             the reference tick), keeping its folder
# Knobs: DBSP_ARGS (more arguments of the dbsp binary, e.g. "--repeat 3"), DUCKDB_ARGS
# (of recompute.py), RNT_BENCH_SCALE (with --generate). See benches/dbsp/README.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DBSP_TARGET=${DBSP_TARGET:-/work/target-dbsp}

if [[ ${1:-} == --generate ]]; then
  workload=${2:?--generate W1|W5 N TICKS}
  changes=${3:?--generate W1|W5 N TICKS}
  ticks=${4:?--generate W1|W5 N TICKS}
  log=$(mktemp)
  (cd "$ROOT" && RNT_BENCH_CHANGES=$changes RNT_BENCH_TICKS=$ticks RNT_BENCH_ONLY=$workload \
    RNT_BENCH_KEEP=1 RNT_BENCH_VERBOSE=1 cargo bench -p rnt-cli --bench commit) 2> >(tee "$log" >&2)
  folder=$(sed -n 's/^keeping the work folder //p' "$log")
  rm -f "$log"
else
  folder=${1:?usage: benches/large_commit.sh FOLDER | --generate W1|W5 N TICKS}
fi
[[ -f $folder/orders.csv ]] || { echo "no orders.csv in $folder" >&2; exit 2; }

CARGO_TARGET_DIR=$DBSP_TARGET cargo build --release --quiet \
  --manifest-path "$ROOT/benches/dbsp/Cargo.toml"
rnt=$ROOT/target/release/rnt
[[ -x $rnt ]] || (cd "$ROOT" && cargo build --release --quiet -p rnt-cli)

# One view's checksum from rnt's store, printed as the other two print theirs:
# check STORE VIEW FIRST SECOND [PER_PLAN_COLUMNS] [FROM]
check() {
  local store=$1 view=$2 first=$3 second=$4 plan=${5:-} from=${6:-$2}
  q() { "$rnt" --store "$store" --no-server sql --format csv "$1" | tail -n +2; }
  local line
  line=$(q "SELECT count(*), coalesce($first, 0), coalesce($second, 0) FROM $from")
  IFS=, read -r rows a b <<<"$line"
  line="$view: rows $rows, $first $a, $second $b"
  if [[ -n $plan ]]; then
    line+=": $(q "SELECT plan, $plan FROM $view ORDER BY plan" | tr ',' ' ' | paste -sd';' | sed 's/;/; /g')"
  fi
  echo "$line"
}

for workload in W1 W5; do
  ls "$folder"/tick-$workload-*.txt >/dev/null 2>&1 || continue
  echo "# $workload"
  echo
  echo "## dbsp"
  # shellcheck disable=SC2086 # DBSP_ARGS is a list of words.
  "$DBSP_TARGET/release/rnt-bench-dbsp" "$folder" --workload $workload ${DBSP_ARGS:-}
  echo
  echo "## DuckDB"
  # shellcheck disable=SC2086
  python3 "$ROOT/benches/duckdb/recompute.py" "$folder" --workload $workload ${DUCKDB_ARGS:-}
  echo
  store=$folder/store-$workload
  if [[ ! -d $store ]]; then
    echo "(no rnt store in $folder: rnt's checksums need a folder the bench kept)"
    continue
  fi
  echo "## rnt (the CLI store after the last tick: $store)"
  echo "checksums after the last tick:"
  if [[ $workload == W1 ]]; then
    check "$store" order_plan "sum(id)" "sum(length(plan))"
    check "$store" plan_total "sum(total)" "sum(n)" "total, n"
    check "$store" reach "sum(x)" "sum(y)"
    # orphan is a denial: rnt keeps it empty by refusing commits and never stores it; its
    # rule, evaluated on the store:
    check "$store" orphan "sum(id)" "sum(0)" "" \
      "orders o WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer)"
  else
    check "$store" top3 "sum(id)" "sum(k)"
    check "$store" running "sum(id)" "sum(total)"
    check "$store" plan_customers "sum(n)" "sum(0)" "n, 0"
    check "$store" recent "sum(id)" "sum(amount)"
    check "$store" first_order "sum(id)" "sum(amount)"
  fi
  echo
done
