#!/bin/sh
# bench.sh - `make bench`: every workload and every bundled real trace (or the user's own:
# TRACES=, WORKLOADS=, ALLOCATORS=) against every strategy the device offers, into
# results/bench-<UTC stamp>/:
#   runs.csv        one row per workload x strategy (uncapped), on the device picked
#   timeline-W.csv  requested/allocated/reserved over time, per workload, every strategy
#   capsweep.csv    the same under caps of 1.0x..2.0x the workload's peak requested
#   mincap.csv      the smallest cap each strategy completes with
#   advise-T.csv    per PyTorch snapshot T: every allocator setting advise replayed, the
#                   recommended PYTORCH_CUDA_ALLOC_CONF first (column alloc_conf)
#   explain-T.txt   per PyTorch snapshot T: the memory at its OOM (or peak), segment by
#                   segment (fragbench explain), drawn in plots/explain-T.png (gnuplot) and
#                   plots/explain-T.html (every block, to hover)
#   env.txt         device, driver, CUDA, commit (and its date), seed, date, and where each figure came from
#   timing.csv      where the time went: every step (kind, input, start and seconds from the
#                   bench's start, exit status)
# then the plots (when gnuplot is installed) and report.md + report.html (`fragbench report`).
#
# The plan. The uncapped rows run on the device (on a GPU: real memory, host ns per call,
# measured driver time), one source after another, alone on the GPU (but with
# ASYNC_BESIDE, below). Caps cost many replays each, and every strategy but async decides
# on a GPU exactly as on the simulated device (`make test-gpu` proves it), so on a GPU
# host the cap sweep and the mincap search run on a simulated device of the GPU's own
# total and free memory, on the CPU cores, in parallel with the uncapped rows; then every
# mincap found is confirmed on the GPU (a replay at it completes with the same peak
# reserved, one precision step below ends as on sim; a disagreement is an error, printed
# loudly; where the strategy learns of a cap
# only from refusals and its uncapped row on the GPU reserved at most the cap found, that
# row is its run at the cap - it never met it - and only the replay below is made: mincap
# --uncapped). async's decisions depend on the driver, so its cap sweep and mincap are
# searched on the GPU itself (with ASYNC_BESIDE=N: its uncapped rows first, then its
# searches N at a time beside the other strategies' uncapped rows).
#
# Environment: DEVICE=auto|sim|cuda (default auto), SEED (default 1), CAPS (the sweep's
# multiples of peak requested), TRACES / WORKLOADS / ALLOCATORS (space-separated; a
# TRACES or WORKLOADS list alone replaces the default inputs), JOBS (parallel CPU jobs,
# default the number of cores), BENCH_DIR (the output folder instead of results/bench-<stamp>);
# on a GPU host GPU_LANES (GPU jobs side by side, default 4), BATCH (inputs per GPU job,
# default two batches per lane) and ASYNC_BESIDE (async's GPU searches N at a time beside
# the other strategies' uncapped rows: sooner, their driver time measured beside that
# work; default 0, off: docs/bench.md).
set -eu

# timing_row STEP INPUT START [EXIT]: a line of timing.csv for a step that began at START
# (date +%s.%N) and ends now, seconds from the bench's start (T0); INPUT quoted where it must be
timing_row() {
  echo "$3 $(date +%s.%N) ${4:-0}" | awk -v t0="$T0" -v k="$1" -v l="$2" \
    '{if (l ~ /[,"]/) {gsub(/"/, "\"\"", l); l = "\"" l "\""}; printf "%s,%s,%.2f,%.2f,%s\n", k, l, $1 - t0, $2 - $1, $3}' >> "$DIR/timing.csv"
}

if [ "${1:-}" = "--job" ]; then   # one parallel job: bench.sh --job KIND LABEL FLAG SOURCE
  kind=$2 label=$3 flag=$4 src=$5
  part="$DIR/.parts/$kind-$label"
  err="$DIR/.logs/$kind-$label.log"
  rc=0
  t_start=$(date +%s.%N)
  srcs="$flag $src" labels=$label
  if [ "$flag" = --batch ]; then   # a GPU job over a batch of inputs, one process ($DIR/.batch-N: "LABEL FLAG SOURCE" lines)
    srcs=$(awk '{printf " %s %s", $2, $3}' "$DIR/.batch-$src")
    labels=$(awk '{printf "%s%s", (NR > 1 ? " " : ""), $1}' "$DIR/.batch-$src")
  fi
  case $kind in
    capsweep) "$BIN" run "$flag" "$src" $SIM_ALLOC $SIMDEV --seed "$SEED" --cap-x "$CAPS" --quiet --out "$part.csv" 2>"$err" || rc=$? ;;
    mincap) found=""
            if [ -n "$CONFIRM" ]; then   # a GPU host: the caps were searched on the CPU (mincap_search); wait for them, in order
              : > "$part.found.csv"
              for l in $labels; do
                while [ ! -f "$DIR/.parts/found-$l.done" ]; do sleep 0.2; done
                f="$DIR/.parts/found-$l.csv"
                skip=1; head -n 1 "$f" | grep -q '^#' && skip=2
                if [ -s "$part.found.csv" ]; then tail -n +$((skip + 1)) "$f" >> "$part.found.csv"; else cat "$f" > "$part.found.csv"; fi
              done
              found="--found $part.found.csv --uncapped $DIR/runs.csv"
            fi
            # shellcheck disable=SC2086
            "$BIN" mincap $srcs $SIM_ALLOC $SIMDEV $CONFIRM $found --seed "$SEED" --quiet --out "$part.csv" 2>"$err" || rc=$? ;;
    mincap_search) "$BIN" mincap "$flag" "$src" $SIM_ALLOC $SIMDEV --seed "$SEED" --quiet --out "$DIR/.parts/found-$label.csv" 2>"$err" || rc=$?
                   : > "$DIR/.parts/found-$label.done" ;;
    # async on the GPU: its cap sweep, then its searches, which take their first step from
    # the uncapped rows and every probe at a cap the sweep ran out under from the sweep
    # (mincap --uncapped, --known: each a replay fewer). Under a cap at or above what its
    # uncapped row reserved, async makes that run (it refuses by itself only under its peak
    # requested; the pool's maxSize never bound it): the sweep's row and the search's probe
    # there are that row (run/mincap --uncapped), not replayed
    async_gpu) sweep="$DIR/.parts/capsweep_gpu-$label.csv"
               # shellcheck disable=SC2086
               "$BIN" run $srcs $GPU_ALLOC --device cuda --seed "$SEED" --cap-x "$CAPS" --uncapped "$UNCAPPED_GPU" --out "$sweep" \
                 2>"$err" >/dev/null || rc=$?
               # shellcheck disable=SC2086
               [ $rc != 0 ] || "$BIN" mincap $srcs $GPU_ALLOC --device cuda --seed "$SEED" --uncapped "$UNCAPPED_GPU" --known "$sweep" \
                 --out "$DIR/.parts/mincap_gpu-$label.csv" >/dev/null 2>>"$err" || rc=$? ;;
    advise) "$BIN" advise --trace "$src" --quiet --out "$DIR/advise-$label.csv" >/dev/null 2>"$err" || rc=$?
            [ $rc = 1 ] && rc=0 ;;   # 1: no setting fits the budget - an answer, in the csv and the report
    explain) "$BIN" explain --trace "$src" $EXPLAINDEV --plot "$DIR/plots/explain-$label.png" --html "$DIR/plots/explain-$label.html" \
               >"$DIR/explain-$label.txt" 2>"$err" || rc=$? ;;
  esac
  [ $rc = 0 ] || echo "$kind $label: exit $rc (see $err)" >> "$DIR/.failed"
  timing_row "$kind" "$labels" "$t_start" "$rc"
  echo "$kind $labels" >> "$DIR/.done"
  n=$(wc -l < "$DIR/.done"); now=$(date +%s); el=$((now - T0))
  left=$(( n > 0 ? el * (TOTAL - n) / n : 0 ))
  printf 'bench: [%d/%d] %s %s done, %ds elapsed, ~%ds left\n' "$n" "$TOTAL" "$kind" "$labels" "$el" "$left" >&2
  exit 0
fi

BIN=${1:-build/fragbench}
DEVICE=${DEVICE:-auto}
SEED=${SEED:-1}
CAPS=${CAPS:-1.0,1.05,1.1,1.2,1.3,1.5,2.0}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
beside_lanes=${ASYNC_BESIDE:-0}
case $beside_lanes in
  ''|*[!0-9]*) echo "bench: ASYNC_BESIDE='$beside_lanes': expected a number of GPU jobs side by side (0: off)" >&2; exit 2 ;;
esac
stamp=$(date -u +%Y%m%dT%H%M%SZ)
DIR=${BENCH_DIR:-results/bench-$stamp}
made_dir=0
[ -e "$DIR" ] || made_dir=1
# a bench that stops before its first step leaves no folder it made behind
give_up() { [ "$made_dir" = 1 ] && rm -rf "$DIR"; exit "$1"; }
mkdir -p "$DIR/.parts" "$DIR/.logs" "$DIR/plots"
T0=$(date +%s)
echo "step,input,start_s,seconds,exit" > "$DIR/timing.csv"
: > "$DIR/.done"

# the device, resolved once (no per-run notices), and what the simulated device of the
# searches must look like to make the same decisions as it
if ! devinfo=$("$BIN" device --device "$DEVICE" 2>"$DIR/.logs/device.log"); then
  cat "$DIR/.logs/device.log" >&2
  give_up 1
fi
kind=$(printf '%s\n' "$devinfo" | sed -n 's/^kind: //p')
devname=$(printf '%s\n' "$devinfo" | sed -n 's/^name: //p')
if [ "$kind" = cuda ]; then
  gpu_total=$(printf '%s\n' "$devinfo" | sed -n 's/^total: //p')
  gpu_free=$(printf '%s\n' "$devinfo" | sed -n 's/^free: //p')
  SIMDEV="--device sim --sim-total $gpu_total --sim-usable $gpu_free"
  EXPLAINDEV="--device sim --sim-total $gpu_total"   # explain takes the total only (a limit in % of it)
  echo "bench: device: cuda ($devname, $gpu_total bytes, $gpu_free free); caps searched on a simulated device of that size, confirmed on the GPU" >&2
else
  SIMDEV="--device sim"
  EXPLAINDEV="--device sim"
  [ "$DEVICE" = auto ] && echo "bench: no GPU visible: every figure on the simulated device ($devname)" >&2
fi

# the inputs: the user's (TRACES=, WORKLOADS=) or every generator and bundled trace
list=$("$BIN" list)
if [ -n "${TRACES:-}${WORKLOADS:-}" ]; then
  workloads=${WORKLOADS:-}
  traces=${TRACES:-}
  for t in $traces; do [ -r "$t" ] || { echo "bench: TRACES: cannot read '$t'" >&2; give_up 2; }; done
else
  workloads=$(printf '%s\n' "$list" | awk '/^workloads/{s=1;next} /^$/{s=0} s && /^  [a-z]/{print $1}' | grep -v -E '^(script|random)$' || true)
  traces=$(ls tests/data/*.pickle tests/data/*.pickle.gz tests/data/*.rmm.csv 2>/dev/null || true)
fi
allocators=${ALLOCATORS:-$(printf '%s\n' "$list" | awk '/^allocators/{s=1;next} /^$/{s=0} s && /^  [a-z]/{print $1}')}
if [ -z "$workloads$traces" ]; then echo "bench: no workloads or traces found" >&2; give_up 2; fi

aargs=""; SIM_ALLOC=""; GPU_ALLOC=""; split_order=""
for a in $allocators; do
  aargs="$aargs --allocator $a"
  # on a GPU, async's decisions depend on the driver: searched on the GPU
  if [ "$kind" = cuda ] && [ "${a%%:*}" = async ]; then GPU_ALLOC="$GPU_ALLOC --allocator $a"; split_order="$split_order 2"
  else SIM_ALLOC="$SIM_ALLOC --allocator $a"; split_order="$split_order 1"; fi
done
# on a GPU host with async and other strategies, ASYNC_BESIDE=N: the uncapped rows in two
# runs, async's GPU searches N at a time beside the second (below)
split=0
[ -n "$GPU_ALLOC" ] && [ -n "$SIM_ALLOC" ] && [ "$beside_lanes" -gt 0 ] && split=1
CONFIRM=""
[ "$kind" = cuda ] && CONFIRM="--confirm-on cuda"

# a CSV line into f[1..n], quoted fields kept whole (splitcsv)
CSV_AWK=$(cat "$(dirname "$0")/csv_split.awk")
label_of() { l=$(basename "$1"); echo "${l%.gz}"; }
# every source as "LABEL FLAG SOURCE", in order
sources=$( { for w in $workloads; do echo "$w --workload $w"; done
             for t in $traces; do echo "$(label_of "$t") --trace $t"; done; } )
nsrc=$(printf '%s\n' "$sources" | grep -c .)
nsnap=0
for t in $traces; do case $t in *.pickle|*.pickle.gz) nsnap=$((nsnap + 1)) ;; esac; done

# the jobs: CPU ones (sim) start with the uncapped rows; GPU ones after them
: > "$DIR/.jobs_cpu"; : > "$DIR/.jobs_gpu"
printf '%s\n' "$sources" | while read -r label flag src; do
  [ -n "$SIM_ALLOC" ] && echo "capsweep $label $flag $src" >> "$DIR/.jobs_cpu"
  if [ "$kind" = cuda ]; then   # the caps searched on the CPU now, confirmed on the GPU after the uncapped rows (in batches, below)
    [ -n "$SIM_ALLOC" ] && echo "mincap_search $label $flag $src" >> "$DIR/.jobs_cpu"
  else
    [ -n "$SIM_ALLOC" ] && echo "mincap $label $flag $src" >> "$DIR/.jobs_cpu"
  fi
  :
done
if "$BIN" advise --help >/dev/null 2>&1; then
  for t in $traces; do
    case $t in *.pickle|*.pickle.gz) echo "advise $(label_of "$t") --trace $t" >> "$DIR/.jobs_cpu" ;; esac
  done
fi
# the memory at each PyTorch snapshot's OOM (or its peak), in words and drawn (report.md shows it)
if "$BIN" explain --help >/dev/null 2>&1; then
  for t in $traces; do
    case $t in *.pickle|*.pickle.gz) echo "explain $(label_of "$t") --trace $t" >> "$DIR/.jobs_cpu" ;; esac
  done
fi
# the GPU jobs (cuda only), in batches of inputs: one process a batch and kind, so that a
# process opening the GPU (0.3-0.6 s on an H100) is paid once a batch, not once an input.
# The longest input (its uncapped rows' time on the GPU) is a batch alone, the others go
# BATCH at a time (default: enough for two batches per GPU lane), longest first; the
# batches are formed once the uncapped rows have said what each input takes (below)
lanes_max=${GPU_LANES:-4}
nbatch=0
if [ "$kind" = cuda ] && [ "$nsrc" -gt 0 ]; then
  BATCH=${BATCH:-$(( (nsrc - 1 + 2 * lanes_max - 1) / (2 * lanes_max) ))}
  [ "$BATCH" -ge 1 ] || BATCH=1
  nbatch=$(( 1 + (nsrc - 1 + BATCH - 1) / BATCH ))
  for b in $(seq 1 "$nbatch"); do
    [ -n "$SIM_ALLOC" ] && echo "mincap b$b --batch $b" >> "$DIR/.jobs_gpu"
    [ -n "$GPU_ALLOC" ] && echo "async_gpu b$b --batch $b" >> "$DIR/.jobs_gpu"
  done
fi
TOTAL=$((1 + split + $(wc -l < "$DIR/.jobs_cpu") + $(wc -l < "$DIR/.jobs_gpu")))
# one thread a process: the bench's parallelism is its jobs' (a pool of threads in each
# would share the cores the uncapped rows are timed on)
FB_THREADS=1
export BIN DIR SEED CAPS SIMDEV EXPLAINDEV SIM_ALLOC GPU_ALLOC CONFIRM T0 TOTAL FB_THREADS
. "$(dirname "$0")/bench_gpu.sh"
echo "bench: $nsrc inputs x $(echo $allocators | wc -w) strategies: $TOTAL steps (the uncapped rows on $kind, $(wc -l < "$DIR/.jobs_cpu") on the CPU in parallel, $(wc -l < "$DIR/.jobs_gpu") on the GPU)" >&2

# the CPU jobs, in the background, JOBS at a time (one core kept for the uncapped rows; on
# a GPU host of 4 cores or more, two: the second for the thread that makes the oracle's
# plans ahead of its rows, FB_THREADS=2 for that run below)
cpu_jobs=$((JOBS > 2 ? JOBS - 1 : JOBS))
run_threads=1
if [ "$kind" = cuda ] && [ "$JOBS" -ge 4 ]; then cpu_jobs=$((JOBS - 2)); run_threads=2; fi
xargs -P "$cpu_jobs" -L 1 sh "$0" --job < "$DIR/.jobs_cpu" &
cpu_pid=$!

# the uncapped rows: one process, every source in order (the device opened once, not once
# per source: on an H100 a process that opens the GPU pays 0.3-0.4 s first), its timeline
# split per source afterwards
rc=0
srcargs=$(printf '%s\n' "$sources" | while read -r label flag src; do printf ' %s %s' "$flag" "$src"; done)
uncapped() {   # uncapped STEP OUT TIMELINE LOG ALLOCATOR-ARGS...: the uncapped rows of every source under those strategies
  step=$1 out=$2 tl=$3 log=$4; shift 4
  t_run=$(date +%s.%N)
  # shellcheck disable=SC2086
  FB_THREADS=$run_threads "$BIN" run $srcargs "$@" --device "$kind" --seed "$SEED" --out "$out" --timeline "$tl" \
    2>"$log" || echo "run $step: exit $? (see $log)" >> "$DIR/.failed"
  timing_row run "$step" "$t_run"
  printf 'run %s\n' "$step" >> "$DIR/.done"
  el=$(($(date +%s) - T0)); n=$(wc -l < "$DIR/.done")
  printf 'bench: [%d/%d] the uncapped rows on %s (%s) done, %ds elapsed, ~%ds left\n' "$n" "$TOTAL" "$kind" "$step" "$el" "$(( el * (TOTAL - n) / n ))" >&2
}
# timeline-LABEL.csv per source: the rows whose first field is "SOURCE/allocator", that
# field cut back to the allocator (quoted where it must be)
split_timeline() {
  [ -f "$DIR/.parts/timeline.csv" ] || return 0
  printf '%s\n' "$sources" | awk -v dir="$DIR" '
    function unq(x) { if (x ~ /^"/) { x = substr(x, 2, length(x) - 2); gsub(/""/, "\"", x) } return x }
    function q(x) { if (x ~ /[,"]/) { gsub(/"/, "\"\"", x); return "\"" x "\"" } return x }
    FNR == NR { n++; lab[n] = $1; src[n] = $3; next }
    FNR == 1 { hdr = $0; next }
    {
      if (match($0, /^"([^"]|"")*"/) || match($0, /^[^,]*/)) { first = unq(substr($0, 1, RLENGTH)); rest = substr($0, RLENGTH + 1) }
      for (i = 1; i <= n; i++) {
        p = src[i] "/"
        if (substr(first, 1, length(p)) != p) continue
        f = dir "/timeline-" lab[i] ".csv"
        if (!(f in seen)) { print hdr > f; seen[f] = 1 }
        print q(substr(first, length(p) + 1)) rest > f
        break
      }
    }' - "$DIR/.parts/timeline.csv"
}
budget=$(awk -v free="${gpu_free:-0}" 'BEGIN {printf "%.0f", 0.9 * free}')
if [ "$split" = 1 ]; then
  # ASYNC_BESIDE=N: async's uncapped rows first, alone on the GPU; its GPU searches then
  # start from them, N at a time, while the other strategies' uncapped rows run, within
  # what the GPU has beside those rows (their most on sim of the GPU's size, where they
  # reserve what they reserve on it, + 1 GiB: gpu_reserve); the confirmations, which start
  # from those rows, after them. Both runs' rows are put back in the order of one run
  # (scripts/merge_split_run.awk). The rows' driver time is then measured beside async's
  # GPU work (docs/bench.md).
  echo "bench: the uncapped rows: $nsrc inputs x $(echo $allocators | wc -w) strategies on $kind, one row after another: async's first, then the others' beside async's GPU searches" >&2
  t_res=$(date +%s.%N)
  # shellcheck disable=SC2086
  ( "$BIN" run $srcargs $SIM_ALLOC $SIMDEV --seed "$SEED" --quiet --out "$DIR/.parts/reserve.csv" 2>"$DIR/.logs/reserve.log" || true
    timing_row reserve "all inputs" "$t_res" ) &
  reserve_pid=$!
  # shellcheck disable=SC2086
  uncapped "all inputs: async" "$DIR/.parts/runs-gpu.csv" "$DIR/.parts/timeline-gpu.csv" "$DIR/.logs/run-gpu.log" $GPU_ALLOC
  wait "$reserve_pid" || true
  UNCAPPED_GPU=$DIR/.parts/runs-gpu.csv
  export UNCAPPED_GPU
  gpu_plan "$UNCAPPED_GPU"
  reserve=$(gpu_reserve "$DIR/.parts/reserve.csv")
  [ -n "$reserve" ] || echo "bench: the other strategies' rows were not had on sim (see $DIR/.logs/reserve.log): what they hold on the GPU is not known, so async's GPU searches run after them" >&2
  beside=$(awk -v b="$budget" -v r="${reserve:-}" 'BEGIN {x = (r == "") ? 0 : b - r; printf "%.0f", (x > 0) ? x : 0}')
  gpu_lists "$DIR/.lists-async" async_gpu
  awk -v b="$beside" '$2 <= b' "$DIR/.lists-async" > "$DIR/.lists-beside"
  awk -v b="$beside" '$2 > b' "$DIR/.lists-async" > "$DIR/.lists-after"
  gpu_lists "$DIR/.lists-after" mincap
  echo "bench: async's GPU searches: $(wc -l < "$DIR/.lists-beside") of $(wc -l < "$DIR/.lists-async") batches beside the other strategies' uncapped rows (up to $beside_lanes side by side within $beside bytes), the rest after them" >&2
  sh "$(dirname "$0")/gpu_lanes.sh" "$beside" "$beside_lanes" "$DIR/.lists-beside" sh "$0" --job &
  lanes_pid=$!
  # shellcheck disable=SC2086
  uncapped "all inputs: the others" "$DIR/.parts/runs-rest.csv" "$DIR/.parts/timeline-rest.csv" "$DIR/.logs/run-rest.log" $SIM_ALLOC
  for m in runs timeline table; do
    case $m in
      runs) f1=$DIR/.parts/runs-rest.csv f2=$DIR/.parts/runs-gpu.csv out=$DIR/runs.csv ;;
      timeline) f1=$DIR/.parts/timeline-rest.csv f2=$DIR/.parts/timeline-gpu.csv out=$DIR/.parts/timeline.csv ;;
      table) f1=$DIR/.logs/run-rest.log f2=$DIR/.logs/run-gpu.log out=$DIR/.logs/run.log ;;
    esac
    [ -f "$f1" ] || f1=/dev/null
    [ -f "$f2" ] || f2=/dev/null
    printf '%s\n' "$sources" | awk -v mode="$m" -v order="$split_order" -f "$(dirname "$0")/csv_split.awk" -f "$(dirname "$0")/merge_split_run.awk" \
      - "$f1" "$f2" > "$out.tmp" && mv "$out.tmp" "$out"
  done
  split_timeline
  wait "$lanes_pid" || true
  if [ -s "$DIR/.lists-after" ]; then
    echo "bench: GPU phase: $(wc -l < "$DIR/.lists-after") jobs ($nbatch batches of inputs), up to $lanes_max side by side within 90% of the GPU's free memory" >&2
    sh "$(dirname "$0")/gpu_lanes.sh" "$budget" "$lanes_max" "$DIR/.lists-after" sh "$0" --job
  fi
else
  echo "bench: the uncapped rows: $nsrc inputs x $(echo $allocators | wc -w) strategies on $kind, in one process, one row after another" >&2
  # shellcheck disable=SC2086
  uncapped "all inputs" "$DIR/runs.csv" "$DIR/.parts/timeline.csv" "$DIR/.logs/run.log" $aargs
  split_timeline
  # the GPU jobs (cuda only): the confirmations of the caps searched on the CPU and async's
  # own searches, side by side. The jobs, longest input first, each start as soon as what
  # the running ones hold and its own fit in 90% of the free memory, at most GPU_LANES
  # (default 4: on one H100 the GPU phase took 35 s with 4 and 37-40 s with 6 or 8 on the
  # same machine, the jobs' driver calls contending) at once (scripts/gpu_lanes.sh).
  if [ -s "$DIR/.jobs_gpu" ]; then
    UNCAPPED_GPU=$DIR/runs.csv
    export UNCAPPED_GPU
    gpu_plan "$UNCAPPED_GPU"
    gpu_lists "$DIR/.lists" async_gpu mincap
    echo "bench: GPU phase: $(wc -l < "$DIR/.jobs_gpu") jobs ($nbatch batches of inputs), up to $lanes_max side by side within 90% of the GPU's free memory" >&2
    sh "$(dirname "$0")/gpu_lanes.sh" "$budget" "$lanes_max" "$DIR/.lists" sh "$0" --job
  fi
fi

# concatenate results files in source order: one header, run_id renumbered. A part holds
# one source's rows (a CPU job) or a batch's (a GPU job): the rows go by their workload
# column in source order, then by PREFIX order, then as they were
merge() {   # merge OUT PREFIX...: the parts PREFIX-*.csv
  out=$1; shift
  files=""
  for p in "$@"; do
    for f in "$DIR/.parts/$p"-*.csv; do
      case $f in *.found.csv) continue ;; esac
      [ -f "$f" ] && files="$files $f"
    done
  done
  [ -n "$files" ] || return 0
  # shellcheck disable=SC2086
  printf '%s\n' "$sources" | awk -v prefixes="$*" -v out="$out" "$CSV_AWK"'
    FNR == NR { idx[$1] = NR; next }
    FNR == 1 {
      np = split(prefixes, P, " "); base = FILENAME; sub(/.*\//, "", base); pi = 0
      for (i = 1; i <= np; i++) if (index(base, P[i] "-") == 1) pi = i
      inhdr = 1; first = ""
    }
    inhdr && /^#/ { first = $0; next }
    inhdr {
      inhdr = 0
      if (!wrote) { if (first != "") print first > out; print $0 > out; wrote = 1 }
      n = splitcsv($0, h); wc = 0
      for (i = 1; i <= n; i++) if (h[i] == "workload") wc = i
      next
    }
    { n = splitcsv($0, f); w = wc ? f[wc] : ""; printf "%d\t%d\t%d\t%s\n", (w in idx) ? idx[w] : 999999, pi, ++seq, $0 }' - $files |
    sort -t "$(printf '\t')" -k1,1n -k2,2n -k3,3n | cut -f 4- | awk -F, 'BEGIN{OFS=","} {$1=NR; print}' >> "$out"
}
wait "$cpu_pid" || rc=1
merge "$DIR/capsweep.csv" capsweep capsweep_gpu
merge "$DIR/mincap.csv" mincap mincap_gpu

# confirmations and loud disagreements
confirmed=""; by_uncapped=""; below_floor=""; async_known=""; async_taken=""
if [ "$kind" = cuda ]; then
  confirmed=$(cat "$DIR"/.logs/mincap-*.log 2>/dev/null | awk '/found caps confirmed on/{a+=$2; b+=$4} END{printf "%d of %d", a, b}')
  by_uncapped=$(cat "$DIR"/.logs/mincap-*.log 2>/dev/null | sed -n 's/.*found caps confirmed on [a-z]* (\([0-9]*\) at the mincap by their uncapped row there).*/\1/p' |
                awk '{n += $1} END {if (n) print n}')
  below_floor=$(cat "$DIR"/.logs/mincap-*.log 2>/dev/null | sed -n 's/.*(\([0-9]*\) one step below under their peak requested.*/\1/p' |
                awk '{n += $1} END {if (n) print n}')
  # async's searches on the GPU: the probes the uncapped rows and the cap sweep answered
  async_known=$(cat "$DIR"/.logs/async_gpu-*.log 2>/dev/null | sed -n 's/^mincap: \([0-9]*\) probes* answered by rows.*/\1/p' |
                awk '{n += $1} END {if (n) print n}')
  # its cap sweep's rows at caps at or above what its uncapped row reserved: that row
  async_taken=$(cat "$DIR"/.logs/async_gpu-*.log 2>/dev/null | sed -n 's/^fragbench run: \([0-9]*\) capped rows* taken from.*/\1/p' |
                awk '{n += $1} END {if (n) print n}')
  if grep -h 'MINCAP NOT CONFIRMED' "$DIR"/.logs/mincap-*.log >/dev/null 2>&1; then
    echo "bench: ERROR: some mincaps found on sim did not hold on the GPU:" >&2
    grep -h 'MINCAP NOT CONFIRMED' "$DIR"/.logs/mincap-*.log >&2
    rc=1
  fi
fi
if [ -s "$DIR/.failed" ]; then
  echo "bench: these steps failed:" >&2; cat "$DIR/.failed" >&2
  for f in $(awk '{print $1"-"$2}' "$DIR/.failed"); do [ -f "$DIR/.logs/$f.log" ] && tail -n 5 "$DIR/.logs/$f.log" >&2; done
  rc=1
fi

# the environment the figures came from
{
  echo "device: $kind"
  echo "device_name: $devname"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
  else
    echo "driver: none"
  fi
  cuda=$( (nvcc --version 2>/dev/null || ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc --version 2>/dev/null) | sed -n 's/.*release \([0-9.]*\).*/\1/p')
  echo "cuda: ${cuda:-none}"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
  cdate=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || true)
  [ -n "$cdate" ] && echo "commit_date: $cdate"   # `fragbench history` orders runs by it
  echo "seed: $SEED"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cores"
  if [ "$kind" = cuda ]; then
    if [ "$split" = 1 ]; then
      echo "figures_uncapped: cuda (memory, host ns/op and driver time measured on the GPU; async's rows alone on it, the other strategies' beside async's searches there)"
    else
      echo "figures_uncapped: cuda (memory, host ns/op and driver time measured on the GPU)"
    fi
    echo "figures_capsweep: sim of the GPU's size ($gpu_total bytes total, $gpu_free free): every strategy's decisions on cuda equal sim's (make test-gpu)${GPU_ALLOC:+; async on cuda}${async_taken:+ ($async_taken of its rows, at caps at or above what its uncapped cuda row reserved, are that row: it never met them)}"
    echo "figures_mincap: searched on sim of the GPU's size, each confirmed on cuda ($confirmed confirmed${by_uncapped:+; $by_uncapped of them at the cap by their uncapped cuda row, which never met it}${below_floor:+; $below_floor of them one step below by their peak requested, under which no run fits})${GPU_ALLOC:+; async searched on cuda}${async_known:+ ($async_known of its probes answered by its uncapped rows and cap sweep there, not replayed)}"
  else
    echo "figures_uncapped: sim"
    echo "figures_capsweep: sim"
    echo "figures_mincap: sim"
  fi
  [ "$nsnap" -gt 0 ] && echo "figures_advise: sim (predictions for PyTorch's allocator settings)"
  :
} > "$DIR/env.txt"

# the table of the uncapped rows
grep -v '^fragbench: device' "$DIR/.logs/run.log" >&2 || true
rm -rf "$DIR/.parts" "$DIR/.jobs_cpu" "$DIR/.jobs_gpu" "$DIR/.done" "$DIR/.needs" "$DIR/.async_needs" "$DIR"/.lists* "$DIR"/.list[0-9]* \
  "$DIR/.order" "$DIR"/.batch-[0-9]*
[ -s "$DIR/.failed" ] || rm -rf "$DIR/.logs" "$DIR/.failed"
t1=$(date +%s)
echo "bench: $(($(wc -l < "$DIR/runs.csv") - $(head -n 1 "$DIR/runs.csv" | grep -c '^#') - 1)) runs in $((t1 - T0)) s -> $DIR${confirmed:+ (mincaps confirmed on the GPU: $confirmed)}" >&2
# the plots (when gnuplot is installed; plots.sh says so otherwise), then report.md
FRAGBENCH=$BIN sh plots/plots.sh "$DIR" || rc=1
FRAGBENCH=$BIN sh plots/report.sh "$DIR" || rc=1
# FIT='batch': what fits under a limit, per workload (scripts/bench_fit.sh: fit-*.csv, plots, report.md's "What fits")
[ -z "${FIT:-}" ] || WORKLOADS="$workloads" sh scripts/bench_fit.sh "$BIN" "$DIR" || rc=1
exit $rc
