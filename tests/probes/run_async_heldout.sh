#!/bin/sh
# run_async_heldout.sh - on a GPU host, one command for issue 31's GPU call: the driver
# through fragbench (`run --device cuda --allocator async`, N runs per job) on every job of
# DATADIR (JOB.pickle, async_ref.csv, SPLIT.txt: see async_heldout.py), next to the sim
# model and PyTorch's backend:cudaMallocAsync runs (the cuda range also counts DATADIR's
# fragbench_cuda.csv, if any); then the sim-only figures of the model's variants
# (own_class on: the probe's exact fit; recycle on: an unprobed hypothesis);
# and the async_recycle probe (recycling of free chunks, exact fits of big holes, the
# unifying-stream free); and N cuda runs per job through the device's default pool
# (FB_DEFAULT_MEMPOOL=1, as PyTorch's backend). Everything goes under OUTDIR: VARIANT.txt
# and VARIANT/heldout.csv (default, default_pool, own_class=1, recycle=1), probe.txt.  Usage: sh tests/probes/run_async_heldout.sh BIN DATADIR OUTDIR [N]
set -u
[ $# -ge 3 ] || { echo "usage: sh tests/probes/run_async_heldout.sh BIN DATADIR OUTDIR [N]" >&2; exit 2; }
BIN=$1 DATA=$2 OUT=$3 N=${4:-3}
DIR=$(dirname "$0")
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$OUT"
status=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
if "$NVCC" -O2 -o "$OUT/async_recycle" "$DIR/async_recycle.cu" -lcuda 2> "$OUT/probe.build.txt"; then
  "$OUT/async_recycle" > "$OUT/probe.txt" 2>&1 || status=1
  cat "$OUT/probe.txt"
else
  echo "async_recycle: build failed"; cat "$OUT/probe.build.txt"; status=1
fi
echo "== default model, sim and cuda ($N runs per job)"
python3 "$DIR/async_heldout.py" "$BIN" "$DATA" "$OUT/default" --cuda "$N" | tee "$OUT/default.txt" || status=1
# the pool kind: PyTorch's backend uses the device's default pool, fragbench a new one
# (gpt_side and ddp: PyTorch 11.744 GB, fragbench's cuda 10.737 GB on both)
echo "== cuda with the device's default pool (FB_DEFAULT_MEMPOOL=1), $N runs per job"
FB_DEFAULT_MEMPOOL=1 python3 "$DIR/async_heldout.py" "$BIN" "$DATA" "$OUT/default_pool" --cuda "$N" --fresh | tee "$OUT/default_pool.txt" || status=1
for v in own_class=1 recycle=1; do
  echo "== sim model async:$v"
  python3 "$DIR/async_heldout.py" "$BIN" "$DATA" "$OUT/$v" --model "$v" | tee "$OUT/$v.txt" || status=1
done
exit $status
