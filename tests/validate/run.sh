#!/bin/sh
# run.sh [FRAGBENCH] - `make validate` on a GPU host: replays the bundled traces and a few
# generators through each real allocator there and through fragbench's strategy for it,
# then prints one line per (input, strategy, figure): real, fragbench on sim and on cuda,
# the differences, and a closing line `N within 1%, M outside`.
#
# Each input is exported once (`fragbench export`) to the native CSV; the same file feeds
# fragbench and the Python drivers, so both replay the same alloc/free sequence. Every
# real allocator runs in its own process, one after another (JAX, CuPy and PyTorch never
# share a process or the GPU's memory at once). A driver that cannot be imported is
# reported as 'not available', not counted.
#
#   VALIDATE_OUT=DIR        where the exports, JSON lines and CSVs go (default build/validate)
#   VALIDATE_INPUTS="..."   override the inputs (trace files and/or gen:NAME[:k=v] entries)
#   VALIDATE_TIMEOUT=S      seconds one real-allocator run may take (default 240)
set -u
FB=${1:-build/fragbench}
OUT=${VALIDATE_OUT:-build/validate}
TMO=${VALIDATE_TIMEOUT:-240}
PY=${PYTHON:-python3}
HERE=$(dirname "$0")
mkdir -p "$OUT"
[ -x "$FB" ] || { echo "run.sh: $FB not built (make)" >&2; exit 2; }

DEFAULT_INPUTS="tests/data/gpt_train.pickle.gz tests/data/leaky_losses.pickle.gz tests/data/resnet_varsize.pickle.gz
tests/data/gpt_train_short_frames.pickle tests/data/leaky_losses.rmm.csv
gen:varlen:iters=4 gen:leaky_losses:iters=100 gen:random:events=40000,max=16MiB"
INPUTS=${VALIDATE_INPUTS:-$DEFAULT_INPUTS}

# fragbench strategy | real run name | how the real run is made
STRATS="bfc:preset=jax|jax-prealloc
bfc:preset=jax,allow_growth=1|jax-growth
cupy|cupy
caching|torch-caching
expandable|torch-expandable
async|torch-async
pool|-"

# which real allocators this host has (asked once: importing jax or torch takes seconds)
HAVE=""
for m in jax cupy torch; do $PY -c "import $m" >/dev/null 2>&1 && HAVE="$HAVE $m"; done
echo "run.sh: real allocators here:${HAVE:- none}" >&2
have() { case " $HAVE " in *" $1 "*) return 0;; esac; return 1; }
real_run() { # NAME EVENTS INPUT -> OUT/INPUT__NAME.json
  name=$1; ev=$2; in=$3
  js="$OUT/${in}__${name}.json"; log="$OUT/${in}__${name}.log"
  case $name in
    jax-prealloc) have jax || return; env -u XLA_PYTHON_CLIENT_PREALLOCATE JAX_PLATFORMS=cuda \
                  timeout "$TMO" $PY "$HERE/jax_replay.py" "$ev" --input "$in" >"$js" 2>"$log" ;;
    jax-growth)   have jax || return; XLA_PYTHON_CLIENT_PREALLOCATE=false JAX_PLATFORMS=cuda \
                  timeout "$TMO" $PY "$HERE/jax_replay.py" "$ev" --input "$in" >"$js" 2>"$log" ;;
    cupy)         have cupy || return; timeout "$TMO" $PY "$HERE/cupy_replay.py" "$ev" --input "$in" >"$js" 2>"$log" ;;
    torch-caching) have torch || return; env -u PYTORCH_CUDA_ALLOC_CONF \
                  timeout "$TMO" $PY "$HERE/torch_replay.py" "$ev" --input "$in" >"$js" 2>"$log" ;;
    torch-expandable) have torch || return; timeout "$TMO" $PY "$HERE/torch_replay.py" "$ev" \
                  --conf expandable_segments:True --input "$in" >"$js" 2>"$log" ;;
    torch-async)  have torch || return; timeout "$TMO" $PY "$HERE/torch_replay.py" "$ev" \
                  --conf backend:cudaMallocAsync --input "$in" >"$js" 2>"$log" ;;
  esac
  rc=$?
  [ $rc -eq 0 ] || echo "{\"allocator\": \"$name\", \"input\": \"$in\", \"error\": \"exit $rc, see $log\"}" >"$js"
}

for spec in $INPUTS; do
  case $spec in
    gen:*) w=${spec#gen:}; in=$(echo "$w" | tr ':,=' '_._'); src="--workload $w" ;;
    *)     in=$(basename "$spec"); src="--trace $spec" ;;
  esac
  ev="$OUT/$in.events.csv"
  $FB export $src --out "$ev" >/dev/null 2>"$OUT/$in.export.log" || { echo "run.sh: export of $spec failed:" >&2; cat "$OUT/$in.export.log" >&2; exit 2; }
  echo "$STRATS" | while IFS='|' read -r strat name; do
    sname=$(echo "$strat" | tr ':,=' '_._')
    for d in sim cuda; do
      $FB run --trace "$ev" --allocator "$strat" --device $d --quiet --out "$OUT/${in}__${sname}__$d.csv" \
        2>"$OUT/${in}__${sname}__$d.log" || echo "run.sh: fragbench $strat on $d for $in failed (see $OUT/${in}__${sname}__$d.log)" >&2
    done
    [ "$name" = - ] || real_run "$name" "$ev" "$in"
  done
  echo "run.sh: $in done ($(date -u +%H:%M:%S))" >&2
done
$PY "$HERE/compare.py" "$OUT" $(for spec in $INPUTS; do case $spec in gen:*) w=${spec#gen:}; echo "$w" | tr ':,=' '_._';; *) basename "$spec";; esac; done)
