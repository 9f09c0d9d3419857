#!/bin/sh
# gpu_measure.sh - on a GPU host: every bundled trace and train_loop on cuda (with
# --validate --verify) and on sim for raw, caching, expandable, async (those present),
# side by side: peak reserved (cuda vs sim), ns/op (host, excluding driver time), the
# driver time per op on cuda; then one replay's end-to-end time with and without --touch.
# async's cuda figure is the unchecked run's (its blocks written in stream order, the
# default): --verify synchronizes at every free, which changes what the driver's pool does.
# Usage: sh tests/gpu_measure.sh [BIN] [OUTDIR]
set -u
BIN=${1:-build/fragbench}
OUT=${2:-results/gpu-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
have=$("$BIN" list | awk '/^allocators/{s=1;next} /^$/{s=0} s && /^  [a-z]/{print $1}')
aargs=""
for a in raw caching expandable async stitch; do
  echo "$have" | grep -qx "$a" && aargs="$aargs --allocator $a"
done
srcs="--workload train_loop"
for t in tests/data/*.pickle.gz tests/data/*.pickle; do [ -f "$t" ] && srcs="$srcs --trace $t"; done
# checked pass (memory figures, validator, on-hardware overlap check) and timed pass (no checks)
"$BIN" run $srcs $aargs --device cuda --validate --verify --quiet --out "$OUT/cuda.csv"; echo "cuda checked rows: exit $?"
"$BIN" run $srcs $aargs --device cuda --quiet --out "$OUT/cuda-speed.csv"; echo "cuda timed rows: exit $?"
"$BIN" run $srcs $aargs --device sim --quiet --out "$OUT/sim.csv"; echo "sim rows: exit $?"
echo
printf '%-24s %-11s %-8s %14s %14s %6s %9s %9s %12s\n' workload allocator status cuda_reserved sim_reserved equal cuda_ns sim_ns drv_ns/op
awk -F, 'FILENAME ~ /sim.csv$/ { if (FNR > 2) { k = $3 "|" $5; sim[k] = $22; simns[k] = $35 } next }
  FILENAME ~ /cuda-speed.csv$/ { if (FNR > 2) { k = $3 "|" $5; ops = $15 + $16; ns[k] = $35; drv[k] = ops ? $33 / ops : 0; res[k] = $22 } next }
  FNR > 2 { k = $3 "|" $5; r = ($5 == "async") ? res[k] : $22;
    printf "%-24.24s %-11s %-8.8s %14s %14s %6s %9s %9s %12.0f\n", $3, $5, $12, r, (k in sim) ? sim[k] : "-",
      (k in sim && sim[k] == r) ? "yes" : ((k in sim) ? "NO" : "-"), ns[k], (k in simns) ? simns[k] : "-", drv[k] }' \
  "$OUT/sim.csv" "$OUT/cuda-speed.csv" "$OUT/cuda.csv" | tee "$OUT/table.txt"
echo
t=tests/data/gpt_train.pickle.gz
for touch in "" --touch; do
  s=$(date +%s%N)
  "$BIN" run --trace "$t" --allocator caching --device cuda $touch --quiet --out /dev/null
  e=$(date +%s%N)
  echo "caching on gpt_train, cuda ${touch:-(no touch)}: $(( (e - s) / 1000000 )) ms end to end" | tee -a "$OUT/table.txt"
done
for touch in --no-touch ""; do
  s=$(date +%s%N)
  "$BIN" run --trace "$t" --allocator async --device cuda $touch --quiet --out /dev/null
  e=$(date +%s%N)
  echo "async on gpt_train, cuda ${touch:-(default: blocks written in stream order)}: $(( (e - s) / 1000000 )) ms end to end" | tee -a "$OUT/table.txt"
done
