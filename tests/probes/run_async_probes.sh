#!/bin/sh
# run_async_probes.sh - on a GPU host: build the cudaMallocAsync pool probes
# (tests/probes/async_*.cu) and the VMM call-cost probe (vmm_cost.cu, which the sim's cost
# table is fitted to) with nvcc and run each; their FINDING lines go to stdout and to
# OUTDIR/probes.txt. Usage: sh tests/probes/run_async_probes.sh [OUTDIR]
set -u
OUT=${1:-results/probes-$(date -u +%Y%m%dT%H%M%SZ)}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
DIR=$(dirname "$0")
mkdir -p "$OUT/bin"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
status=0
for src in "$DIR"/async_*.cu "$DIR"/vmm_cost.cu; do
  name=$(basename "$src" .cu)
  if ! "$NVCC" -O2 -o "$OUT/bin/$name" "$src" -lcuda 2> "$OUT/$name.build.txt"; then
    echo "$name: build failed:"; cat "$OUT/$name.build.txt"; status=1; continue
  fi
  echo "== $name"
  "$OUT/bin/$name" 2>&1 | tee "$OUT/$name.txt" || status=1
done
cat "$OUT"/async_*.txt "$OUT"/vmm_cost.txt | grep '^FINDING' > "$OUT/probes.txt"
exit $status
