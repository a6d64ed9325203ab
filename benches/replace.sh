#!/usr/bin/env bash
# The replace benchmark (issue 10): `rnt import orders FILE --replace` of the 1M-order
# reference file with 1 % of its rows changed vs a fresh import of that file, with the
# W1+W2+W4 views and with none. Prints one table.
# Usage: benches/replace.sh   (knobs: RNT_BENCH_SCALE=0.1, RNT_BENCH_RUNS, RNT_BENCH_CHANGED_PERMILLE)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
exec cargo bench --manifest-path "$ROOT/Cargo.toml" -p rnt-cli --bench replace
