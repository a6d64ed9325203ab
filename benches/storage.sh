#!/usr/bin/env bash
# The storage benchmark (issue 8): CLI commit vs in-process commit of the reference tick,
# `rnt status`, bytes on disk vs CSV bytes, for packs (zstd, lz4, raw) and sled side by
# side, and the peak RSS of a 10M-row import with views. Prints one table.
# Usage: benches/storage.sh   (knobs: see docs/bench-storage.md; e.g. RNT_BENCH_SCALE=0.1)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
exec cargo bench --manifest-path "$ROOT/Cargo.toml" -p rnt-cli --bench storage
