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

# One plan, three launchers: two traces x two strategies x a cap of each kind on one
# device, on --devices sim:2 and on 2 ranks give the same memory columns row for row
# (one device: trace, strategy, cap; two devices: strategy, cap, then trace i on device i
# and the device=all row).
A=tests/data/leaky_losses.pickle.gz B=tests/data/leaky_losses.rmm.csv
SEL="--trace $A --trace $B --allocator caching --allocator expandable --cap-x 1.5 --cap 0.5 --quiet"
"$THREADS" run $SEL --device sim --out "$tmp/one.csv"
"$THREADS" run $SEL --devices sim:2 --out "$tmp/two.csv"
mpirun --oversubscribe -np 2 "$BIN" run $SEL --device sim --out "$tmp/ranks.csv"
mem() { awk -F, '$1 ~ /^[0-9]+$/ && $7 != "all" { print $4 "," $5 "," $9 "," $10 "," $12 "," $20 "," $21 "," $22 }' "$1"; }
mem "$tmp/one.csv" | awk -F, '{ print $1 "," $2 "," $3 "," $4 "|" $0 }' | sort -t'|' -k1,1 -s | cut -d'|' -f2 > "$tmp/one.m"
for f in two ranks; do
  mem "$tmp/$f.csv" | awk -F, '{ print $1 "," $2 "," $3 "," $4 "|" $0 }' | sort -t'|' -k1,1 -s | cut -d'|' -f2 > "$tmp/$f.m"
  [ "$(wc -l < "$tmp/$f.m")" -eq 8 ] || { echo "mpi_test: $f: expected 8 device rows"; cat "$tmp/$f.csv"; exit 1; }
  cmp -s "$tmp/one.m" "$tmp/$f.m" || { echo "mpi_test: $f rows differ from one device's:"; diff "$tmp/one.m" "$tmp/$f.m"; exit 1; }
done
# --timeline and --breakdown are refused under MPI with a message (they work with --devices)
if mpirun --oversubscribe -np 2 "$BIN" run $SEL --device sim --out "$tmp/x.csv" --timeline "$tmp/t.csv" 2>"$tmp/tl.err"; then
  echo "mpi_test: --timeline under MPI was accepted"; exit 1
fi
grep -q -- "--timeline is not available under MPI" "$tmp/tl.err" || { echo "mpi_test: no message for --timeline under MPI:"; cat "$tmp/tl.err"; exit 1; }
echo "mpi_test: one device, --devices sim:2 and 2 ranks give the same memory columns (8 rows); --timeline refused under MPI: ok"
