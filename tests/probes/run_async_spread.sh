#!/bin/sh
# run_async_spread.sh - on a GPU host: how repeatable the driver's stream-ordered pool is.
# Replays each input N times with `async` on cuda (default touch, as a program) and, where
# PyTorch is installed, runs torch_async_ref.py's jobs N times under
# backend:cudaMallocAsync; prints one line per input: the sim model's peak reserved, the
# lowest and highest of the N real runs, their spread, and where the model lies (inside
# the real range, or how far outside). A model of the pool can be no closer to "the"
# figure than the driver is to itself: this is the yardstick docs/async-pool.md uses.
# Usage: sh tests/probes/run_async_spread.sh BIN OUTDIR [N] [SNAPSHOT...]
#   (no SNAPSHOT: the bundled traces; N defaults to 5; TORCH_JOBS="" skips PyTorch)
set -u
[ $# -ge 2 ] || { echo "usage: sh tests/probes/run_async_spread.sh BIN OUTDIR [N] [SNAPSHOT...]" >&2; exit 2; }
BIN=$1 OUT=$2
shift 2
N=5
case ${1:-} in ''|*[!0-9]*) ;; *) N=$1; shift ;; esac
[ $# -gt 0 ] || set -- tests/data/*.pickle.gz
TORCH_JOBS=${TORCH_JOBS-mlp_var tfm_var conv_var}
DIR=$(dirname "$0")
mkdir -p "$OUT"
runs=$OUT/runs.csv
echo "input,source,rep,peak_reserved" > "$runs"
status=0

peak_of() {   # CSV from `fragbench run` -> its first row's peak_reserved
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "peak_reserved") c = i } NR == 2 { print $c }' "$1"
}

model_and_cuda() {   # $1 input file, $2 name
  "$BIN" run --trace "$1" --allocator async --device sim --quiet --out "$OUT/sim.csv" || return 1
  echo "$2,sim,0,$(peak_of "$OUT/sim.csv")" >> "$runs"
  i=1
  while [ "$i" -le "$N" ]; do
    "$BIN" run --trace "$1" --allocator async --device cuda --quiet --out "$OUT/cuda.csv" || return 1
    echo "$2,cuda,$i,$(peak_of "$OUT/cuda.csv")" >> "$runs"
    i=$((i + 1))
  done
}

for t in "$@"; do
  n=$(basename "$t"); n=${n%.gz}; n=${n%.pickle}
  model_and_cuda "$t" "$n" || { echo "$t: replay failed" >&2; status=1; }
done

if [ -n "$TORCH_JOBS" ] && python3 -c 'import torch' 2>/dev/null; then
  # each job of TORCH_JOBS once under the native allocator (its snapshot), then N times
  # under the async backend; torch_async_ref.py's one-run form appends to ref.csv
  mkdir -p "$OUT/torch"
  echo "job,backend,peak_reserved,peak_allocated" > "$OUT/torch/ref.csv"
  : > "$OUT/torch.log"
  for j in $TORCH_JOBS; do
    python3 "$DIR/torch_async_ref.py" "$OUT/torch" "$j" native >> "$OUT/torch.log" 2>&1 || status=1
    i=1
    while [ "$i" -le "$N" ]; do
      python3 "$DIR/torch_async_ref.py" "$OUT/torch" "$j" async >> "$OUT/torch.log" 2>&1 || status=1
      i=$((i + 1))
    done
  done
  awk -F, 'NR > 1 && $2 == "async" { k[$1]++; print $1 ",pytorch," k[$1] "," $3 }' "$OUT/torch/ref.csv" >> "$runs"
  for j in $TORCH_JOBS; do
    [ -f "$OUT/torch/$j.pickle" ] && { model_and_cuda "$OUT/torch/$j.pickle" "$j" || status=1; }
  done
fi

printf '%-24s %-8s %15s %15s %15s %7s  %s\n' input real sim lowest highest spread "sim vs real range"
awk -F, 'NR > 1 {
    if ($2 == "sim") { sim[$1] = $4; next }
    key = $1 SUBSEP $2
    if (!(key in lo) || $4 < lo[key]) lo[key] = $4
    if (!(key in hi) || $4 > hi[key]) hi[key] = $4
  }
  END {
    for (key in lo) {
      split(key, k, SUBSEP)
      if (!(k[1] in sim)) { printf "%-24s %-8s %15s %15s %15s\n", k[1], k[2], "(no sim row)", lo[key], hi[key]; continue }
      s = sim[k[1]]
      where = (s >= lo[key] && s <= hi[key]) ? "inside" : (s < lo[key] ? sprintf("%.1f%% below", 100 * (lo[key] - s) / lo[key]) \
                                                              : sprintf("%.1f%% above", 100 * (s - hi[key]) / hi[key]))
      printf "%-24s %-8s %15s %15s %15s %6.1f%%  %s\n", k[1], k[2], s, lo[key], hi[key], 100 * (hi[key] - lo[key]) / lo[key], where
    }
  }' "$runs" | sort | tee "$OUT/spread.txt"
exit $status
