#!/bin/sh
# gpu_async_cost.sh OUTDIR [FRAGBENCH] - on a GPU host, after `make`: where async's time on
# the GPU goes, into OUTDIR/async_cost.txt. async's replays on cuda write each block
# (one cudaMemsetAsync of the whole block on its stream: the GPU's work, which decides the
# driver's stream-ordered reuse), so a replay moves the sum of its allocations' bytes
# through the GPU's memory. Per input: that sum, an uncapped async replay with and without
# the writes (wall time), and async's whole mincap search on cuda (wall time).
set -u
OUT=${1:?usage: gpu_async_cost.sh OUTDIR [FRAGBENCH]}
FB=${2:-build/fragbench}
mkdir -p "$OUT"
f="$OUT/async_cost.txt"
printf 'input allocated_GB run_touch_s run_notouch_s mincap_s\n' > "$f"
secs() { t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}'; }
for src in "--workload varlen" "--workload train_loop" "--trace tests/data/resnet_varsize.pickle.gz" "--trace tests/data/gpt_train.pickle.gz"; do
  # shellcheck disable=SC2086
  "$FB" export $src --out "$OUT/.ex.csv" > /dev/null 2>&1
  gb=$(awk -F, '$1 == "alloc" {s += $3} END {printf "%.1f", s / 1e9}' "$OUT/.ex.csv")
  # shellcheck disable=SC2086
  a=$(secs "$FB" run $src --allocator async --device cuda --quiet --out "$OUT/.r.csv")
  # shellcheck disable=SC2086
  b=$(secs "$FB" run $src --allocator async --device cuda --no-touch --quiet --out "$OUT/.r.csv")
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$FB" mincap $src --allocator async --device cuda --out "$OUT/.m.csv" > "$OUT/.m.log" 2>&1
  t1=$(date +%s.%N)
  c=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
  printf '%s %s %s %s %s\n' "$(echo "$src" | sed 's/.* //; s/.*\///')" "$gb" "$a" "$b" "$c" >> "$f"
done
rm -f "$OUT/.ex.csv" "$OUT/.r.csv" "$OUT/.m.csv" "$OUT/.m.log"
cat "$f"
