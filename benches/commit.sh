#!/usr/bin/env bash
# The commit-cost benchmark (issue 22): the CLI commit, the in-process durable commit and
# the in-memory commit of the same ticks side by side, for W1–W4 and W5–W9, beside the
# floor (bytes written ÷ BLAKE3 speed + one fsync), with the breakdown of each. Prints
# the tables. Usage: benches/commit.sh   (knobs: RNT_BENCH_SCALE, RNT_BENCH_TICKS,
# RNT_BENCH_ONLY=W1|W5, RNT_BENCH_VERBOSE=1; see cli/benches/commit.rs)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
exec cargo bench --manifest-path "$ROOT/Cargo.toml" -p rnt-cli --bench commit
