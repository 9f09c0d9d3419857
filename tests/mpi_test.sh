#!/bin/sh
# mpi_test.sh - the MPI build (make MPI=1) on 4 ranks of sim devices: 4 device rows and
# an aggregate row written by rank 0, whose figures must equal the threaded runner's
# (--devices sim:4) for the same workload (same per-rank seeds), and whose imbalance is
# max/min of the per-rank peak_reserved. Usage: sh tests/mpi_test.sh [MPI binary]
set -eu
BIN=${1:-build/mpi/fragbench}
THREADS=${THREADS_BIN:-build/fragbench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun --oversubscribe -np 4 "$BIN" run --workload ddp_buckets:imbalance=0.3 --allocator caching \
  --device sim --quiet --out "$tmp/mpi.csv"
"$THREADS" run --workload ddp_buckets:imbalance=0.3 --allocator caching --devices sim:4 --quiet --out "$tmp/threads.csv"
# workload,allocator,peak_requested,peak_reserved,imbalance per row (device labels differ);
# data rows are those with a numeric run_id (the header, and an old "# fragbench" line, are not)
fields() { awk -F, '$1 ~ /^[0-9]+$/ { print $3 "," $5 "," $20 "," $22 "," $42 }' "$1"; }
rows=$(awk -F, '$1 ~ /^[0-9]+$/' "$tmp/mpi.csv" | wc -l)
[ "$rows" -eq 5 ] || { echo "mpi_test: expected 4 rank rows and 1 aggregate row, got $rows"; cat "$tmp/mpi.csv"; exit 1; }
fields "$tmp/threads.csv" > "$tmp/threads.fields"
fields "$tmp/mpi.csv" > "$tmp/mpi.fields"
cmp -s "$tmp/mpi.fields" "$tmp/threads.fields" || { echo "mpi_test: MPI rows differ from the threaded runner's:"; diff "$tmp/mpi.fields" "$tmp/threads.fields"; exit 1; }
imb=$(awk -F, '$1 ~ /^[0-9]+$/ && $7 != "all" { if (min == "" || $22 < min) min = $22; if ($22 > max) max = $22 }
  END { printf "%.4f", max / min }' "$tmp/mpi.csv")
got=$(awk -F, '$1 ~ /^[0-9]+$/ && $7 == "all" { print $42 }' "$tmp/mpi.csv")
[ "$imb" = "$got" ] || { echo "mpi_test: aggregate imbalance $got, per-rank rows give $imb"; exit 1; }
echo "mpi_test: 4 ranks on sim, rows equal the threaded runner's, imbalance $got: ok"
