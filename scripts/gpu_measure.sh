#!/bin/sh
# gpu_measure.sh OUTDIR - on a GPU host, after a fresh checkout: build, then the figures
# docs/performance.md quotes for one GPU, into OUTDIR (a handful of files):
#   build.log       the build (make -j)
#   context.txt     seconds for `fragbench device --device cuda` three times (a process
#                   that opens the GPU: what each of make bench's GPU jobs pays first)
#   bench.log       `time make bench` (its last line: BENCH <wall> s wall, exit <status>)
#   bench.tgz       make bench's timing.csv (where its time went, step by step), env.txt
#                   and runs.csv
#   uncapped.txt    the uncapped rows on the GPU per strategy: the rows' wall time, the time
#                   in driver calls (modeled_driver_ns, measured on cuda), the strategy's
#                   host time (ns_per_op x calls), and the rest
#   dmon.txt        the GPU's use during make bench, a line a second (nvidia-smi dmon -s um:
#                   sm and memory-bandwidth %, memory used)
#   percall.txt     tests/probes/torch_percall.sh's table (PyTorch's allocators per call
#                   against fragbench percall, warm and fresh); NO_PERCALL=1 skips it
#   async_cost.txt  with ASYNC_COST=1: scripts/gpu_async_cost.sh (what async's replays cost
#                   on the GPU)
# Each part runs alone on the machine, one after another. BENCHES=N runs make bench N
# times (bench.log and bench.tgz of the last; every run's wall time in bench.log).
set -u
OUT=${1:?usage: gpu_measure.sh OUTDIR}
mkdir -p "$OUT"
make -j"$(nproc)" > "$OUT/build.log" 2>&1 || { tail -n 40 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv,noheader > "$OUT/context.txt" 2>&1
for i in 1 2 3; do
  t0=$(date +%s.%N); build/fragbench device --device cuda > /dev/null 2>&1; t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "fragbench device --device cuda: %.3f s\n", b - a}' >> "$OUT/context.txt"
done
walls=""
for i in $(seq 1 "${BENCHES:-1}"); do
  rm -rf results/bench-measure
  nvidia-smi dmon -s um -d 1 > "$OUT/dmon.txt" 2>&1 &
  dmon=$!
  t0=$(date +%s.%N)
  BENCH_DIR=results/bench-measure make bench > "$OUT/bench.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  kill "$dmon" 2>/dev/null
  walls="$walls $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')"
done
awk -v w="$walls" -v rc="$rc" 'BEGIN {printf "BENCH%s s wall, exit %d (the last)\n", w, rc}' >> "$OUT/bench.log"
tar -C results/bench-measure -czf "$OUT/bench.tgz" timing.csv env.txt runs.csv 2>/dev/null
# the uncapped rows per strategy (seconds): wall, driver calls, the strategy's host time, the rest
awk -F, 'NR == 1 && /^#/ {next}
  !h {for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next}
  {a = $c["allocator"]; w[a] += $c["wall_ns"] / 1e9; d[a] += $c["modeled_driver_ns"] / 1e9
   x[a] += $c["ns_per_op"] * ($c["allocs"] + $c["frees"]) / 1e9; n[a]++}
  END {printf "%-12s %5s %8s %8s %8s %8s\n", "strategy", "rows", "wall_s", "driver_s", "host_s", "rest_s"
       for (a in w) {printf "%-12s %5d %8.2f %8.2f %8.2f %8.2f\n", a, n[a], w[a], d[a], x[a], w[a] - d[a] - x[a]; W += w[a]; D += d[a]; X += x[a]}
       printf "%-12s %5s %8.2f %8.2f %8.2f %8.2f\n", "all", "", W, D, X, W - D - X}' results/bench-measure/runs.csv > "$OUT/uncapped.txt" 2>&1
[ -n "${NO_PERCALL:-}" ] || PERCALL_OUT=build/percall sh tests/probes/torch_percall.sh > "$OUT/percall.txt" 2>&1
[ -z "${ASYNC_COST:-}" ] || sh scripts/gpu_async_cost.sh "$OUT" > /dev/null 2>&1
tail -n 3 "$OUT/bench.log"
cat "$OUT/uncapped.txt"
[ -f "$OUT/percall.txt" ] && tail -n 16 "$OUT/percall.txt"
[ -f "$OUT/async_cost.txt" ] && cat "$OUT/async_cost.txt"
cat "$OUT/context.txt"
