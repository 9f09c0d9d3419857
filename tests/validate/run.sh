#!/bin/sh
# run.sh [FRAGBENCH] - `make validate` on a GPU host: replays the bundled traces and a few
# generators through each real allocator there and through fragbench's strategy for it,
# then prints one line per (input, strategy, figure): real, fragbench on sim and on cuda,
# the differences, and a closing line `N within 1%, M outside`.
#
# Each input is exported once (`fragbench export`) to the native CSV; the same file feeds
# fragbench and the Python drivers, so both replay the same alloc/free sequence. The real
# allocators run in their own processes, one after another (JAX, CuPy and PyTorch never
# share a process or the GPU's memory at once): CuPy and each PyTorch backend take every
# input in one process (fresh pool / emptied cache and reset peaks between inputs), JAX one
# process per input and mode (XLA's peaks cannot be reset). fragbench's sim rows run on the
# CPU cores meanwhile. A driver that cannot be imported is reported, not counted.
#
#   VALIDATE_OUT=DIR        where the exports, JSON lines, CSVs and table.txt go (default build/validate)
#   VALIDATE_INPUTS="..."   override the inputs (trace files and/or gen:NAME[:k=v] entries)
#   VALIDATE_TIMEOUT=S      seconds one real-allocator process may take (default 300)
set -u
FB=${1:-build/fragbench}
OUT=${VALIDATE_OUT:-build/validate}
TMO=${VALIDATE_TIMEOUT:-300}
PY=${PYTHON:-python3}
HERE=$(dirname "$0")
mkdir -p "$OUT"
[ -x "$FB" ] || { echo "run.sh: $FB not built (make)" >&2; exit 2; }

DEFAULT_INPUTS="tests/data/gpt_train.pickle.gz tests/data/leaky_losses.pickle.gz tests/data/resnet_varsize.pickle.gz
tests/data/gpt_train_short_frames.pickle tests/data/leaky_losses.rmm.csv
gen:varlen:iters=2 gen:leaky_losses:iters=100"
INPUTS=${VALIDATE_INPUTS:-$DEFAULT_INPUTS}
# fragbench's strategies (compare.py pairs each with its real run)
STRATS="bfc:preset=jax bfc:preset=jax,allow_growth=1 cupy caching expandable async pool"

fname() { echo "$1" | tr ':,=' '_._'; }
input_name() { case $1 in gen:*) fname "${1#gen:}";; *) basename "$1";; esac; }
log() { echo "run.sh: $* ($(date -u +%H:%M:%S))" >&2; }

# which real allocators this host has (asked once: importing jax or torch takes seconds)
HAVE=""
for m in jax cupy torch; do $PY -c "import $m" >/dev/null 2>&1 && HAVE="$HAVE $m"; done
log "real allocators here:${HAVE:- none}"
have() { case " $HAVE " in *" $1 "*) return 0;; esac; return 1; }

# 1. export every input once
EVS="" NAMES=""
for spec in $INPUTS; do
  in=$(input_name "$spec")
  case $spec in gen:*) src="--workload ${spec#gen:}";; *) src="--trace $spec";; esac
  $FB export $src --out "$OUT/$in.events.csv" >/dev/null 2>"$OUT/$in.export.log" ||
    { echo "run.sh: export of $spec failed:" >&2; cat "$OUT/$in.export.log" >&2; exit 2; }
  EVS="$EVS $OUT/$in.events.csv" NAMES="$NAMES $in"
done
log "exported:$NAMES"

# 2. fragbench on sim, on the CPU cores, in the background
for in in $NAMES; do for s in $STRATS; do echo "$in $s"; done; done |
  xargs -P 8 -n 2 sh -c 'exec "$0" run --trace "$1/$2.events.csv" --allocator "$3" --device sim --quiet \
      --out "$1/$2__$(echo "$3" | tr ":,=" "_._")__sim.csv" 2>"$1/$2__$(echo "$3" | tr ":,=" "_._")__sim.log"' "$FB" "$OUT" &
SIMJOB=$!

table() { $PY "$HERE/compare.py" "$OUT" $NAMES >"$OUT/table.txt" 2>&1; }

# 3. the real allocators that take every input in one process
if have cupy; then timeout "$TMO" $PY "$HERE/cupy_replay.py" $EVS --out-dir "$OUT" >/dev/null 2>"$OUT/cupy.log"; log "cupy done"; fi
if have torch; then
  env -u PYTORCH_CUDA_ALLOC_CONF timeout "$TMO" $PY "$HERE/torch_replay.py" $EVS --name torch-caching --out-dir "$OUT" >/dev/null 2>"$OUT/torch-caching.log"
  timeout "$TMO" $PY "$HERE/torch_replay.py" $EVS --conf expandable_segments:True --name torch-expandable --out-dir "$OUT" >/dev/null 2>"$OUT/torch-expandable.log"
  timeout "$TMO" $PY "$HERE/torch_replay.py" $EVS --conf backend:cudaMallocAsync --touch --name torch-async --out-dir "$OUT" >/dev/null 2>"$OUT/torch-async.log"
  log "torch done"
fi

# 4. per input: fragbench on cuda, then XLA's BFC in both of JAX's modes
for in in $NAMES; do
  ev="$OUT/$in.events.csv"
  for s in $STRATS; do
    f=$(fname "$s")
    $FB run --trace "$ev" --allocator "$s" --device cuda --quiet --out "$OUT/${in}__${f}__cuda.csv" 2>"$OUT/${in}__${f}__cuda.log" ||
      echo "run.sh: fragbench $s on cuda for $in failed (see $OUT/${in}__${f}__cuda.log)" >&2
  done
  if have jax; then
    env -u XLA_PYTHON_CLIENT_PREALLOCATE JAX_PLATFORMS=cuda timeout "$TMO" $PY "$HERE/jax_replay.py" "$ev" \
      --name jax-prealloc --out-dir "$OUT" >/dev/null 2>"$OUT/${in}__jax-prealloc.log"
    XLA_PYTHON_CLIENT_PREALLOCATE=false JAX_PLATFORMS=cuda timeout "$TMO" $PY "$HERE/jax_replay.py" "$ev" \
      --name jax-growth --out-dir "$OUT" >/dev/null 2>"$OUT/${in}__jax-growth.log"
  fi
  table
  log "$in done"
done
wait $SIMJOB
table
cat "$OUT/table.txt"
# the graphed jobs: replayed against PyTorch's own recorded peaks (graphs_check.sh)
sh "$HERE/graphs_check.sh" "$FB" > "$OUT/graphs.txt" 2>&1; graphs_rc=$?
tail -n 1 "$OUT/graphs.txt"
tail -1 "$OUT/table.txt" | grep -q ' 0 outside' && [ "$graphs_rc" = 0 ]
