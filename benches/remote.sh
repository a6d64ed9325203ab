#!/usr/bin/env bash
# The remote benchmark (issue 12): the reference store pushed to a remote on the S3 test
# server (SeaweedFS), ticks pushed and fetched one by one, cold commands straight on s3://.
# Starts the test server if it is not running. Prints one table.
# Usage: benches/remote.sh   (knobs: RNT_BENCH_SCALE=0.1, RNT_BENCH_TICKS=10, RNT_BENCH_VERBOSE=1)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/scripts/s3-test-server" start >&2
eval "$("$ROOT/scripts/s3-test-server" env)"
exec cargo bench --manifest-path "$ROOT/Cargo.toml" -p rnt-cli --bench remote
