#!/bin/sh
# perf.sh - `make perf`: the suite's own speed on sim (see harness/cli/cli_perf.c), into
# results/perf-<UTC stamp>.csv. PERF_EVENTS (default 10000000) sets the long stream.
set -eu
BIN=${1:-build/fragbench}
mkdir -p results
out=results/perf-$(date -u +%Y%m%dT%H%M%SZ).csv
"$BIN" perf --out "$out"
echo "perf: rows in $out"
echo
# the snapshot reader alone, per bundled snapshot and on a large synthetic one with stack
# frames (the case that must not read slower than a frameless one)
"$BIN" readspeed
# REF=path: the same runs side by side with a fixed reference binary, and the ratio
if [ -n "${REF:-}" ]; then
  echo
  echo "side by side with $REF (median of ${ROUNDS:-3}, alternated; ratio = reference / this):"
  sh scripts/side_by_side.sh "$BIN" "$REF"
fi
