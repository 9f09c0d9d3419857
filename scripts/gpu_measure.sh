#!/bin/sh
# gpu_measure.sh OUTDIR - on a GPU host, after a fresh checkout: build, then the figures
# docs/performance.md quotes for one GPU, into OUTDIR (a handful of files):
#   build.log       the build (make -j)
#   context.txt     seconds for `fragbench device --device cuda` three times (a process
#                   that opens the GPU: what each of make bench's GPU jobs pays first)
#   bench.log       `time make bench` (its last line: BENCH <wall> s wall <user> user <sys> sys)
#   timing.csv      where make bench's time went, step by step; env.txt and runs.csv beside it
#   dmon.txt        the GPU's use during make bench, a line a second (nvidia-smi dmon -s um:
#                   sm and memory-bandwidth %, memory used)
#   async_cost.txt  scripts/gpu_async_cost.sh: what async's replays cost on the GPU
#   percall.txt     tests/probes/torch_percall.sh's table (PyTorch's allocators per call
#                   against fragbench percall, warm and fresh)
# Each part runs alone on the machine, one after another.
set -u
OUT=${1:?usage: gpu_measure.sh OUTDIR}
mkdir -p "$OUT"
make -j"$(nproc)" > "$OUT/build.log" 2>&1 || { tail -n 40 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv,noheader > "$OUT/context.txt" 2>&1
for i in 1 2 3; do
  t0=$(date +%s.%N); build/fragbench device --device cuda > /dev/null 2>&1; t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "fragbench device --device cuda: %.3f s\n", b - a}' >> "$OUT/context.txt"
done
nvidia-smi dmon -s um -d 1 > "$OUT/dmon.txt" 2>&1 &
dmon=$!
t0=$(date +%s.%N)
BENCH_DIR=results/bench-measure make bench > "$OUT/bench.log" 2>&1
rc=$?
t1=$(date +%s.%N)
kill "$dmon" 2>/dev/null
awk -v a="$t0" -v b="$t1" -v rc="$rc" 'BEGIN {printf "BENCH %.1f s wall, exit %d\n", b - a, rc}' >> "$OUT/bench.log"
cp results/bench-measure/timing.csv results/bench-measure/env.txt results/bench-measure/runs.csv "$OUT/" 2>/dev/null
[ -z "${ASYNC_COST:-}" ] || sh scripts/gpu_async_cost.sh "$OUT" > /dev/null 2>&1
PERCALL_OUT=build/percall sh tests/probes/torch_percall.sh > "$OUT/percall.txt" 2>&1
tail -n 3 "$OUT/bench.log"
tail -n 16 "$OUT/percall.txt"
[ -f "$OUT/async_cost.txt" ] && cat "$OUT/async_cost.txt"
cat "$OUT/context.txt"
