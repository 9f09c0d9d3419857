#!/bin/sh
# record_session.sh OUT - one device call's recordings (GPU host; not part of `make test`):
#   lanes 1-2  advise's OOM jobs (advise_oom_record.py), one job at a time per lane
#   lane 3     graphed jobs (graph_jobs.py): build set and held-out set, default and expandable
#   then       bench's cupy mincap disagreement (issue 38.4) replayed alone on sim and cuda
# Everything lands in OUT/rec (tar'd by the caller).
set -u
out=${1:?usage: record_session.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
fb=$(pwd)/build/fragbench
mkdir -p "$out/rec/oom" "$out/rec/graphs/build" "$out/rec/graphs/heldout" "$out/rec/bench"
py=python3
( $py "$here/advise_oom_record.py" "$out/rec/oom" "$fb" gpt_varlen_fp32 gpt_varlen_fp16_ckpt2 resnet_varsize ) > "$out/rec/oom/lane1.log" 2>&1 &
( $py "$here/advise_oom_record.py" "$out/rec/oom" "$fb" gpt_varlen_bf16 gpt_varlen_ckpt_bf16 ) > "$out/rec/oom/lane2.log" 2>&1 &
(
  for set in build heldout; do
    for job in graphed step_graph mempool compiled; do
      case $set in
        build) params="" ;;
        heldout) case $job in graphed) params="layers=3 batch=6 seq=768 seed=2" ;; step_graph) params="layers=3 batch=12 seq=384 seed=2" ;;
                 mempool) params="d=1536 n=10 seed=2" ;; compiled) params="d=1536 layers=5 batch=96 seed=2" ;; esac ;;
      esac
      for conf in "" "expandable_segments:True"; do
        tag=${conf:+_exp}
        # shellcheck disable=SC2086
        $py "$here/graph_jobs.py" $job $params --conf "$conf" --snapshot "$out/rec/graphs/$set/$job$tag.pickle" \
          >> "$out/rec/graphs/$set/runs.jsonl" 2>> "$out/rec/graphs/$set/errors.log"
      done
    done
  done
) &
wait
# issue 38.4: the one mincap bench could not confirm, alone on the GPU
for dev in sim cuda; do
  $fb run --workload train_resnet --allocator cupy --cap-bytes 5835113472 --device $dev --timeline "$out/rec/bench/tl_$dev.csv" \
    --out "$out/rec/bench/run_$dev.csv" > "$out/rec/bench/run_$dev.log" 2>&1
done
$fb mincap --workload train_resnet --allocator cupy --device sim --sim-total "$($fb device --device cuda | sed -n 's/^total: //p')" \
  --sim-usable "$($fb device --device cuda | sed -n 's/^free: //p')" --confirm-on cuda > "$out/rec/bench/mincap.csv" 2> "$out/rec/bench/mincap.log"
$fb device --device cuda > "$out/rec/bench/device.txt" 2>&1
for f in "$out"/rec/oom/*/*.pickle "$out"/rec/graphs/*/*.pickle; do [ -f "$f" ] && gzip -9 "$f"; done
