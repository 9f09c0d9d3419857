#!/bin/sh
# bench.sh - `make bench`: every workload and every bundled real trace against every
# strategy the device offers, into results/bench-<UTC stamp>/:
#   runs.csv        one row per workload x strategy (uncapped)
#   timeline-W.csv  requested/allocated/reserved over time, per workload, every strategy
#   capsweep.csv    the same under caps of 1.0x..2.0x the workload's peak requested
#   mincap.csv      the smallest cap each strategy completes with
#   advise-T.csv    per PyTorch snapshot T: every allocator setting advise replayed, the
#                   recommended PYTORCH_CUDA_ALLOC_CONF first (column alloc_conf)
#   explain-T.txt   per PyTorch snapshot T: the memory at its OOM (or peak), segment by
#                   segment (fragbench explain), drawn in plots/explain-T.png (gnuplot)
#   env.txt         device, driver, CUDA, commit, seed, date
# then the plots (when gnuplot is installed) and report.md (`fragbench report`).
# Environment: DEVICE=auto|sim|cuda (default auto), SEED (default 1), QUICK=1 (fewer caps).
set -eu
BIN=${1:-build/fragbench}
DEVICE=${DEVICE:-auto}
SEED=${SEED:-1}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
dir=results/bench-$stamp
mkdir -p "$dir"
t0=$(date +%s)

# what this binary offers: workloads (generators), allocators
list=$("$BIN" list)
workloads=$(printf '%s\n' "$list" | awk '/^workloads/{s=1;next} /^$/{s=0} s && /^  [a-z]/{print $1}' | grep -v -E '^(script|random)$' || true)
allocators=$(printf '%s\n' "$list" | awk '/^allocators/{s=1;next} /^$/{s=0} s && /^  [a-z]/{print $1}')
traces=$(ls tests/data/*.pickle tests/data/*.pickle.gz tests/data/*.rmm.csv 2>/dev/null || true)

aargs=""
for a in $allocators; do aargs="$aargs --allocator $a"; done

# one invocation per source, so that each gets its own timeline; rows merged after
: > "$dir/.rows"
first=1
run_source() {   # $1 = label, rest = source arguments
  label=$1; shift
  rm -f "$dir/.part.csv"
  "$BIN" run "$@" $aargs --device "$DEVICE" --seed "$SEED" --out "$dir/.part.csv" \
    --timeline "$dir/timeline-$label.csv" 2>>"$dir/.table" || rc=$?
  [ -f "$dir/.part.csv" ] || return 0
  if [ $first = 1 ]; then head -n 2 "$dir/.part.csv" > "$dir/runs.csv"; first=0; fi
  tail -n +3 "$dir/.part.csv" >> "$dir/.rows"
}
rc=0
if [ -z "$workloads$traces" ]; then echo "bench: no workloads or traces found" >&2; exit 2; fi
for w in $workloads; do run_source "$w" --workload "$w"; done
for t in $traces; do
  label=$(basename "$t"); label=${label%.gz}
  run_source "$label" --trace "$t"
done
awk -F, 'BEGIN{OFS=","} {$1=NR; print}' "$dir/.rows" >> "$dir/runs.csv"
rm -f "$dir/.rows" "$dir/.part.csv"

srcargs=""
for w in $workloads; do srcargs="$srcargs --workload $w"; done
for t in $traces; do srcargs="$srcargs --trace $t"; done
caps=${CAPS:-1.0,1.05,1.1,1.2,1.3,1.5,2.0}
"$BIN" run $srcargs $aargs --device "$DEVICE" --seed "$SEED" --cap-x "$caps" --quiet \
  --out "$dir/capsweep.csv" || rc=$?
if "$BIN" mincap --help >/dev/null 2>&1; then
  "$BIN" mincap $srcargs $aargs --device "$DEVICE" --seed "$SEED" --quiet --out "$dir/mincap.csv" || rc=$?
fi
# which PYTORCH_CUDA_ALLOC_CONF each PyTorch snapshot should use (predicted on sim)
if "$BIN" advise --help >/dev/null 2>&1; then
  for t in $traces; do
    case $t in *.pickle|*.pickle.gz) ;; *) continue ;; esac
    label=$(basename "$t"); label=${label%.gz}
    "$BIN" advise --trace "$t" --quiet --out "$dir/advise-$label.csv" >/dev/null || rc=$?
  done
fi
# the memory at each PyTorch snapshot's OOM (or its peak), in words and drawn (report.md shows it)
if "$BIN" explain --help >/dev/null 2>&1; then
  mkdir -p "$dir/plots"
  for t in $traces; do
    case $t in *.pickle|*.pickle.gz) ;; *) continue ;; esac
    name=$(basename "$t")
    "$BIN" explain --trace "$t" --plot "$dir/plots/explain-$name.png" >"$dir/explain-$name.txt" 2>/dev/null || rc=$?
  done
fi

# the environment the figures came from
{
  device=$(awk -F, 'NR==3{print $7}' "$dir/runs.csv")
  echo "device: $device"
  echo "device_name: $(awk -F, 'NR==3{print $8}' "$dir/runs.csv")"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
  else
    echo "driver: none"
  fi
  cuda=$( (nvcc --version 2>/dev/null || ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc --version 2>/dev/null) | sed -n 's/.*release \([0-9.]*\).*/\1/p')
  echo "cuda: ${cuda:-none}"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
  echo "seed: $SEED"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cores"
} > "$dir/env.txt"

cat "$dir/.table" | awk 'NR==1 || !/^workload /' >&2
rm -f "$dir/.table"
t1=$(date +%s)
echo "bench: $(($(wc -l < "$dir/runs.csv") - 2)) runs in $((t1 - t0)) s -> $dir" >&2
# the plots (when gnuplot is installed; plots.sh says so otherwise), then report.md
FRAGBENCH=$BIN sh plots/plots.sh "$dir" || rc=1
FRAGBENCH=$BIN sh plots/report.sh "$dir" || rc=1
exit $rc
