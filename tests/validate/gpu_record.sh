#!/bin/sh
# gpu_record.sh PART OUTDIR - GPU-host recordings that fragbench's models are built from and
# tested on (tests/validate/torch_jobs.py; one process per run). Not part of `make test`.
#   fit     the largest batch that completes 4 steps under set_per_process_memory_fraction,
#           per job x PyTorch setting x fraction: OUTDIR/fit/real.csv (one row per trial) and
#           OUTDIR/fit/summary.jsonl (one line per search); trials run P at a time
#   advise  the same variable-length jobs recorded with several data orders (seeds), plus
#           OOM snapshots with PyTorch's error text: OUTDIR/advise/*.pickle, *.oom.txt, runs.jsonl
#   async   each job once under the native allocator (snapshot) and 3 times under
#           backend:cudaMallocAsync: OUTDIR/async/JOB.pickle, async_ref.csv
set -u
part=${1:?usage: gpu_record.sh fit|advise|async OUTDIR}
out=${2:?usage: gpu_record.sh fit|advise|async OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
jobs="$py $here/torch_jobs.py"
dir=$part
case $part in async*) dir=async ;; esac   # the async parts share one folder
mkdir -p "$out/$dir"
cd "$out/$dir" || exit 2

case $part in
fit)
  # name|job and params|vary range ; the settings and fractions below
  cat > plan.txt <<'EOF'
gpt_fp32|gpt seq=512|1 64
gpt_bf16|gpt seq=512 amp=bf16|1 128
gpt_ckpt_bf16|gpt seq=1024 amp=bf16 ckpt=1|1 128
resnet50|resnet|1 400
gpt_varlen_max|gpt varlen=1 seq=1024 bmin=4|4 64
EOF
  : > trials.txt
  while IFS='|' read -r name spec range; do
    set -- $range
    for conf in "" "expandable_segments:True" "backend:cudaMallocAsync"; do
      [ "$name" = gpt_varlen_max ] && [ "$conf" = "backend:cudaMallocAsync" ] && continue
      echo "0.125|$name|$spec|$1|$2|$conf" >> trials.txt
      case $name in gpt_fp32|resnet50) [ "$conf" = "backend:cudaMallocAsync" ] || echo "0.25|$name|$spec|$1|$2|$conf" >> trials.txt ;; esac
    done
  done < plan.txt
  run_one() {
    IFS='|' read -r frac name spec lo hi conf <<EOF
$1
EOF
    # shellcheck disable=SC2086
    $jobs bisect $spec --vary batch --lo "$lo" --hi "$hi" --fraction "$frac" --conf "$conf" --csv "real-$name-$frac-${conf:-default}.csv" --name "$name"
  }
  export jobs
  grep '^0.125' trials.txt | while read -r t; do echo "$t"; done > t125.txt
  grep '^0.25' trials.txt > t25.txt
  for f in t125.txt:${P125:-6} t25.txt:${P25:-3}; do
    list=${f%%:*}; p=${f##*:}
    n=0
    while read -r t; do
      run_one "$t" >> summary.jsonl 2>> errors.log &
      n=$((n + 1))
      if [ $n -ge "$p" ]; then wait; n=0; fi
    done < "$list"
    wait
  done
  { echo "job,conf,fraction,limit_bytes,vary,value,ok,peak_reserved,peak_allocated,params"
    for f in real-*.csv; do tail -n +2 "$f"; done; } > real.csv
  cat summary.jsonl
  ;;
advise)
  : > runs.jsonl
  for s in ${SEEDS:-1 2 3 4}; do
    $jobs run gpt varlen=1 batch=32 seq=1024 steps=16 --seed $s --snapshot varlen_seed$s.pickle >> runs.jsonl 2>> errors.log &
    $jobs run gpt varlen=1 batch=32 seq=1024 steps=16 amp=bf16 ckpt=1 --seed $s --snapshot ckpt_seed$s.pickle >> runs.jsonl 2>> errors.log
    wait
  done
  # OOM snapshots: the seed-1 jobs under fractions they do not fit, with PyTorch's message
  $jobs run gpt varlen=1 batch=32 seq=1024 steps=16 --seed 1 --fraction 0.2 --snapshot varlen_seed1_oom.pickle --oom-text varlen_seed1_oom.txt >> runs.jsonl 2>> errors.log &
  $jobs run gpt varlen=1 batch=32 seq=1024 steps=16 amp=bf16 ckpt=1 --seed 1 --fraction 0.08 --snapshot ckpt_seed1_oom.pickle --oom-text ckpt_seed1_oom.txt >> runs.jsonl 2>> errors.log
  wait
  cat runs.jsonl
  ;;
async|async_native|async_ref|async_cuda)
  # async = async_native (snapshots) then async_ref (3 runs under backend:cudaMallocAsync,
  # one at a time: the driver's pool depends on timing); async_cuda replays each snapshot 3
  # times through fragbench on the driver's pool (FRAGBENCH=build/fragbench)
  # JOBS_FILE=FILE of set|name|spec lines: another set of jobs (a new held-out set) instead
  if [ -n "${JOBS_FILE:-}" ]; then cp "$JOBS_FILE" jobs.txt; else cat > jobs.txt <<'EOF'
build|gpt_ckpt_bf16|gpt batch=16 seq=1024 amp=bf16 ckpt=1 steps=6
build|gpt_side|gpt batch=8 seq=1024 side=1 steps=6
build|resnet_var_cl_bf16|resnet batch=64 size=320 varsize=1 cl=1 amp=bf16 steps=6
build|mlp_var|mlp_var
build|tfm_var|tfm_var
build|conv_var|conv_var
heldout|gpt_varlen|gpt varlen=1 batch=32 seq=1024 steps=8
heldout|mixed|mixed
heldout|ddp|ddp batch=8 seq=1024
heldout|gpt_ckpt2_fp16_accum|gpt batch=16 seq=1024 amp=fp16 ckpt=2 accum=2 evals=1 steps=6
heldout|resnet_fp32|resnet batch=96 steps=4
EOF
  fi
  awk -F'|' '{print $1, $2}' jobs.txt > SPLIT.txt
  row() { $py -c "import json,sys; r=json.loads(sys.stdin.read()); print('$1,$2,$3,$4,%d,%d,%s' % (r['peak_reserved'], r['peak_allocated'], r['seconds']))"; }
  [ -f async_ref.csv ] || echo "job,set,backend,run,peak_reserved,peak_allocated,seconds" > async_ref.csv
  if [ "$part" = async ] || [ "$part" = async_native ]; then
    n=0   # the native allocator does not depend on timing: ${NATIVE_PAR:-3} at a time
    while IFS='|' read -r set name spec; do
      # shellcheck disable=SC2086
      ( $jobs run $spec --snapshot "$name.pickle" 2>> errors.log | tail -n 1 | row "$name" "$set" native 1 >> async_ref.csv ) < /dev/null &
      n=$((n + 1)); if [ $n -ge "${NATIVE_PAR:-3}" ]; then wait; n=0; fi
    done < jobs.txt
    wait
  fi
  if [ "$part" = async ] || [ "$part" = async_ref ]; then
    while IFS='|' read -r set name spec; do
      for k in $(seq "${RUNS:-3}"); do
        # shellcheck disable=SC2086
        $jobs run $spec --conf backend:cudaMallocAsync 2>> errors.log < /dev/null | tail -n 1 | row "$name" "$set" async "$k" >> async_ref.csv
      done
    done < jobs.txt
  fi
  if [ "$part" = async_cuda ]; then
    fb=${FRAGBENCH:?FRAGBENCH=path/to/fragbench}
    echo "job,set,allocator,run,peak_reserved,status" > fragbench_cuda.csv
    while IFS='|' read -r set name spec; do
      for k in $(seq "${RUNS:-3}"); do
        "$fb" run --trace "$name.pickle" --allocator async --device cuda --quiet 2>> errors.log < /dev/null |
          awk -F, -v j="$name" -v s="$set" -v k="$k" 'NR==1{for(i=1;i<=NF;i++)c[$i]=i; next} {print j","s",async,"k","$c["peak_reserved"]","$c["status"]}' >> fragbench_cuda.csv
      done
    done < jobs.txt
    cat fragbench_cuda.csv
  fi
  cat async_ref.csv
  ;;
*) echo "gpu_record.sh: unknown part '$part' (fit, advise, async, async_native, async_ref, async_cuda)" >&2; exit 2 ;;
esac
