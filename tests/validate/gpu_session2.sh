#!/bin/sh
# gpu_session2.sh OUT - one device call's checks (GPU host; not part of `make test`):
#   make test-gpu; capture.py for real (capture_check.sh); `make bench` on the GPU, timed;
#   cupy on sim and cuda against CuPy's own pool on the bundled inputs; one more OOM job
#   recorded for advise (resnet_varsize_b). Logs in OUT/s2 (tar'd by the caller).
set -u
out=${1:?usage: gpu_session2.sh OUT}
fb=$(pwd)/build/fragbench
d=$out/s2
mkdir -p "$d"
( python3 tests/validate/advise_oom_record.py "$d/oom" "$fb" resnet_varsize_b > "$d/oom.log" 2>&1 ) &
make test-gpu > "$d/test-gpu.log" 2>&1; echo "test-gpu rc=$?" >> "$d/summary.txt"
sh tests/validate/capture_check.sh "$fb" > "$d/capture.log" 2>&1; echo "capture_check rc=$?" >> "$d/summary.txt"
wait
t0=$(date +%s); BENCH_DIR=$d/bench make bench > "$d/bench.log" 2>&1; rc=$?; t1=$(date +%s)
echo "bench rc=$rc in $((t1 - t0)) s" >> "$d/summary.txt"
# cupy: fragbench's model (sim and cuda) against CuPy's pool on the bundled inputs
v=$d/val; mkdir -p "$v"; names=""; evs=""
for t in tests/data/gpt_train.pickle.gz tests/data/leaky_losses.pickle.gz tests/data/resnet_varsize.pickle.gz \
         tests/data/gpt_train_short_frames.pickle tests/data/leaky_losses.rmm.csv; do
  n=$(basename "$t"); "$fb" export --trace "$t" --out "$v/$n.events.csv" > /dev/null 2>&1; names="$names $n"; evs="$evs $v/$n.events.csv"
done
python3 tests/validate/cupy_replay.py $evs --out-dir "$v" > /dev/null 2> "$v/cupy.log"
for n in $names; do for dev in sim cuda; do
  "$fb" run --trace "$v/$n.events.csv" --allocator cupy --device $dev --quiet --out "$v/${n}__cupy__$dev.csv" 2>> "$v/fb.log"
done; done
python3 tests/validate/compare.py "$v" $names > "$v/table.txt" 2>&1
for f in "$d"/oom/*/*.pickle; do [ -f "$f" ] && gzip -9 "$f"; done
