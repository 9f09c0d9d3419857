# bench_gpu.sh - make bench's GPU jobs on a GPU host, sourced by scripts/bench.sh (its
# variables: DIR, sources, nbatch, BATCH, CSV_AWK): the batches of inputs and, per batch
# and kind, one list of jobs with what it holds on the GPU at most, for
# scripts/gpu_lanes.sh to run side by side within a memory budget.
#
# What a job holds: a confirmation, the largest cap it confirms (+5%); async's searches,
# what async reserved uncapped on the GPU (+30%: the driver's pool varies run to run); each
# with 1 GiB for its CUDA context; where those are not known, 1.55x the input's peak
# requested.
# shellcheck shell=sh disable=SC2154

# gpu_plan UNCAPPED: the batches from the uncapped rows in UNCAPPED (a results CSV). Per
# input its peak requested and its rows' wall time on the GPU (what its jobs take: the
# longest go first, so that none is left running alone at the end) in .needs, async's
# uncapped peak reserved in .async_needs; the inputs in the order of .needs, then any not
# in it; the first alone, then BATCH at a time, each batch in fragbench's own order of
# sources (the workloads, then the traces): .batch-N, "LABEL FLAG SOURCE" lines
gpu_plan() {
  awk "$CSV_AWK"'
    !csvrow($0, f, c) {next}
    {w = f[c["workload"]]}
    ("peak_requested" in c) && f[c["peak_requested"]] + 0 > need[w] {need[w] = f[c["peak_requested"]] + 0}
    ("wall_ns" in c) {took[w] += f[c["wall_ns"]]}
    END {for (x in need) printf "%.0f %.0f %s\n", took[x], need[x], x}' "$1" | sort -n -r | cut -d' ' -f2- > "$DIR/.needs"
  awk "$CSV_AWK"'
    !csvrow($0, f, c) {next}
    ("peak_reserved" in c) && f[c["allocator"]] == "async" {printf "%.0f %s\n", f[c["peak_reserved"]] + 0, f[c["workload"]]}' "$1" > "$DIR/.async_needs"
  { cat "$DIR/.needs"; printf '%s\n' "$sources" | awk '{print 0, $1}'; } | awk '!seen[$2]++' > "$DIR/.order"
  b=0; k=0
  while read -r _ label; do
    if [ "$b" -lt "$nbatch" ] && { [ "$b" -le 1 ] || [ "$k" -ge "$BATCH" ]; }; then b=$((b + 1)); k=0; fi
    printf '%s\n' "$sources" | awk -v l="$label" '$1 == l' >> "$DIR/.batch-$b"
    k=$((k + 1))
  done < "$DIR/.order"
  for f in "$DIR"/.batch-[0-9]*; do
    [ -f "$f" ] || continue
    { awk '$2 == "--workload"' "$f"; awk '$2 != "--workload"' "$f"; } > "$f.sorted" && mv "$f.sorted" "$f"
  done
}

# the largest cap a confirmation of LABEL replays (its search's rows), or nothing
gpu_largest_cap() {
  [ -f "$DIR/.parts/found-$1.csv" ] || return 0
  awk "$CSV_AWK"'
    !csvrow($0, f, c) {next}
    ("mincap_bytes" in c) && f[c["mincap_bytes"]] + 0 > m {m = f[c["mincap_bytes"]] + 0}
    END {if (m > 0) printf "%.0f\n", m}' "$DIR/.parts/found-$1.csv"
}

# gpu_lists OUT KIND...: for each batch, and in it each KIND (async_gpu, mincap) in the order
# given, a list of its job (.listN: the job's line of .jobs_gpu), appended to OUT as
# "LIST NEED", NEED what its inputs hold at most
gpu_lists() {
  out=$1; shift
  : >> "$out"
  for b in $(seq 1 "$nbatch"); do
    [ -s "$DIR/.batch-$b" ] || continue
    for k in "$@"; do
      line=$(awk -v k="$k" -v b="b$b" '$1 == k && $2 == b' "$DIR/.jobs_gpu")
      [ -n "$line" ] || continue
      held=0
      for label in $(awk '{print $1}' "$DIR/.batch-$b"); do
        h=""
        case $k in
          mincap) h=$(gpu_largest_cap "$label"); [ -n "$h" ] && h=$(awk -v x="$h" 'BEGIN {printf "%.0f", 1.05 * x + 1073741824}') ;;
          *) h=$(awk -v l="$label" '$2 == l {printf "%.0f", 1.3 * $1 + 1073741824; exit}' "$DIR/.async_needs") ;;
        esac
        [ -n "$h" ] || h=$(awk -v l="$label" '$2 == l {printf "%.0f", 1.55 * $1; exit}' "$DIR/.needs")
        [ -n "$h" ] && [ "$h" -gt "$held" ] && held=$h
      done
      nlist=$((${nlist:-0} + 1))
      echo "$line" > "$DIR/.list$nlist"
      echo "$DIR/.list$nlist $held" >> "$out"
    done
  done
}

# gpu_reserve RESULTS: what the uncapped rows of RESULTS (a run on sim of the GPU's size)
# hold on the GPU at most: the largest peak reserved, + 1 GiB for the CUDA context; every
# strategy but async reserves on the GPU exactly what it does there (make test-gpu).
# Nothing when RESULTS has no row
gpu_reserve() {
  awk "$CSV_AWK"'
    !csvrow($0, f, c) {next}
    ("peak_reserved" in c) && f[c["peak_reserved"]] + 0 > m {m = f[c["peak_reserved"]] + 0}
    ("peak_reserved" in c) {n++}
    END {if (n) printf "%.0f\n", m + 1073741824}' "$1" 2>/dev/null
}
