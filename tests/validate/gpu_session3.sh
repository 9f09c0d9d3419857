#!/bin/sh
# gpu_session3.sh OUT - one device call's checks (GPU host; not part of `make test`): make
# test-gpu (cupy and the graph pools on cuda among them), the graphed jobs against PyTorch's
# peaks on sim and cuda, `make bench` timed (exit 0 wanted), then `make validate`.
set -u
out=${1:?usage: gpu_session3.sh OUT}
d=$out/s3
mkdir -p "$d"
make test-gpu > "$d/test-gpu.log" 2>&1; echo "test-gpu rc=$?" >> "$d/summary.txt"
sh tests/validate/graphs_check.sh build/fragbench > "$d/graphs.txt" 2>&1; echo "graphs_check rc=$?" >> "$d/summary.txt"
t0=$(date +%s); BENCH_DIR=$d/bench-gpu make bench > "$d/bench.log" 2>&1; rc=$?; t1=$(date +%s)
echo "bench rc=$rc in $((t1 - t0)) s" >> "$d/summary.txt"
t0=$(date +%s); VALIDATE_OUT=$d/validate timeout "${VALIDATE_S:-230}" make validate > "$d/validate.log" 2>&1; rc=$?; t1=$(date +%s)
echo "validate rc=$rc in $((t1 - t0)) s" >> "$d/summary.txt"
rm -rf "$d/validate"/*.events.csv
