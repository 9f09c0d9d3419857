#!/bin/sh
# run_async_replays.sh - on a GPU host: the bundled traces (and any extra snapshots given)
# replayed through the real cudaMallocAsync pool by tests/probes/async_replay.cu, in each
# work mode (none, touch1, full) and pool kind (new, default), logging every block's address
# and the pool's reserved bytes: the ground truth the sim model is checked against.
# Usage: sh tests/probes/run_async_replays.sh BIN OUTDIR [TRACE...]
set -u
BIN=$1; OUT=$2; shift 2
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$OUT/bin"
"$NVCC" -O2 -o "$OUT/bin/async_replay" "$(dirname "$0")/async_replay.cu" || exit 1
for t in tests/data/*.pickle.gz "$@"; do
  n=$(basename "$t"); n=${n%.gz}; n=${n%.pickle}
  "$BIN" export --trace "$t" --out "$OUT/$n.csv" || continue
  for mode in none touch1 full; do
    for pool in new default; do
      "$OUT/bin/async_replay" "$OUT/$n.csv" $mode $pool > "$OUT/$n.$mode.$pool.log"
      grep '^FINDING' "$OUT/$n.$mode.$pool.log"
    done
  done
  gzip -f "$OUT"/$n.*.log
done
