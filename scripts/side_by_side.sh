#!/bin/sh
# side_by_side.sh - this binary's wall time against a fixed reference binary on the same
# runs, alternated (reference, this, reference, this...) so that a shared machine's load
# falls on both alike; ROUNDS rounds (default 3), the median of each, and the ratio
# reference / this (above 1: this one is faster). `REF=path make perf` runs it after perf.
#   sh scripts/side_by_side.sh BIN REF
# The runs: a replay of the bundled varlen snapshot under caching, expandable and raw
# (20 times: each is short), the varlen generator for 20000 steps under caching and
# expandable (raw runs out of simulated address space there in the 6766e48 binary), and
# mincap of async on gpt_train. Each command's own start-up and reading are in its time.
set -eu
BIN=${1:?usage: side_by_side.sh BIN REF}
REF=${2:?usage: side_by_side.sh BIN REF}
ROUNDS=${ROUNDS:-3}
V=tests/data/recorded/async2/gpt_varlen_ckpt2_fp16.pickle.gz
T=tests/data/gpt_train.pickle.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
# one run of case $1 with binary $2: its wall seconds on stdout
one() {
  t0=$(now)
  case $1 in
    trace) i=0; while [ $i -lt 20 ]; do "$2" run --trace $V --allocator caching --allocator expandable --allocator raw --quiet --out "$tmp/o.csv" || exit 1; i=$((i + 1)); done ;;
    workload) "$2" run --workload varlen:iters=20000 --allocator caching --allocator expandable --quiet --out "$tmp/o.csv" ;;
    mincap) "$2" mincap --trace $T --allocator async --quiet --out "$tmp/o.csv" ;;
  esac
  t1=$(now)
  echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}'
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
printf '%-10s %10s %10s %8s\n' case "ref s" "this s" ratio
for c in trace workload mincap; do
  : > "$tmp/ref"; : > "$tmp/bin"
  r=0
  while [ $r -lt "$ROUNDS" ]; do
    one $c "$REF" >> "$tmp/ref"
    one $c "$BIN" >> "$tmp/bin"
    r=$((r + 1))
  done
  a=$(median < "$tmp/ref"); b=$(median < "$tmp/bin")
  printf '%-10s %10s %10s %8s\n' $c "$a" "$b" "$(echo "$a $b" | awk '{printf "%.2fx", ($2 > 0 ? $1 / $2 : 0)}')"
done
