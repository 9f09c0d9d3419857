#!/bin/sh
# bench_fit.sh BIN DIR - `make bench FIT='batch'`: what fits, per workload of the bench
# (fragbench fit): for each parameter named in FIT and each generator that has it, the
# largest value every strategy completes under FIT_LIMIT (default 0.125 of the device,
# as set_per_process_memory_fraction), into DIR:
#   fit-W-P.csv          fit's rows (docs/fit.md)
#   plots/fit-W-P.png    peak reserved against P per strategy, the limit drawn
#   fit.md               the table of every workload, appended to report.md as "What fits"
# Called by scripts/bench.sh after the report when FIT is set. Environment: FIT (the
# parameters), FIT_LIMIT, FIT_ALLOCATORS (default caching and expandable, PyTorch's
# default and expandable_segments:True), WORKLOADS (the bench's; default every generator
# with the parameter), SEED. Always runs on the simulated device: fit answers without a GPU.
set -eu
BIN=${1:?usage: bench_fit.sh BIN DIR}
DIR=${2:?usage: bench_fit.sh BIN DIR}
FIT=${FIT:?bench_fit.sh: FIT names the parameters to vary, e.g. FIT=batch}
limit=${FIT_LIMIT:-0.125}
allocs=${FIT_ALLOCATORS:-caching expandable}
seed=${SEED:-1}
mkdir -p "$DIR/plots" "$DIR/.logs"
aargs=""
for a in $allocs; do aargs="$aargs --allocator $a"; done
list=$("$BIN" list)
workloads=${WORKLOADS:-$(printf '%s\n' "$list" | awk '/^workloads/{s=1;next} /^$/{s=0} s && /^  [a-z]/{print $1}' | grep -v -E '^(script|random)$' || true)}

# does generator $1 (its name, before any ':') have parameter $2?
has_param() {
  printf '%s\n' "$list" | awk -v w="${1%%:*}" -v p="$2" '
    /^  [a-z]/ {cur = $1; next}
    cur == w && $1 == p {found = 1}
    END {exit !found}'
}

md="$DIR/fit.md"
{
  echo "## What fits"
  echo
  echo "The largest value of each parameter that completes under the limit ($limit of the device), per strategy"
  echo "(\`fragbench fit\`, on the simulated device, margin as fit's default; docs/fit.md). headroom: the"
  echo "limit minus peak reserved at that value; next needs: the smallest limit under which the next value completes."
  echo
  echo "| workload | parameter | strategy | largest | peak reserved | headroom | next needs | note |"
  echo "|---|---|---|--:|--:|--:|--:|---|"
} > "$md"
n=0
for p in $FIT; do
  for w in $workloads; do
    has_param "$w" "$p" || continue
    label=$(printf '%s' "$w" | tr -c 'A-Za-z0-9_.=-' '_')-$p
    log="$DIR/.logs/fit-$label.log"
    # shellcheck disable=SC2086
    if ! "$BIN" fit --workload "$w" --vary "$p" --limit "$limit" $aargs --device sim --seed "$seed" --quiet \
         --out "$DIR/fit-$label.csv" --plot "$DIR/plots/fit-$label.png" 2>"$log"; then
      echo "bench_fit: $w --vary $p failed:" >&2
      sed 's/^/  /' "$log" >&2
      echo "| $w | $p | | | | | | failed: $(head -n 1 "$log" | tr '|' '/') |" >> "$md"
      continue
    fi
    row_awk="$(cat "$(dirname "$0")/csv_split.awk")"'
      function gb(x) { return x == "" ? "-" : sprintf("%.2f GB", x / 1e9) }
      !csvrow($0, f, col) { next }
      { st = f[col["status"]]; note = (st ~ /non-monotonic/) ? st : ""
        printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", w, p, f[col["allocator"]],
          (f[col["max_value"]] == "" ? "none" : f[col["max_value"]]),
          (f[col["max_value"]] == "" ? "-" : gb(f[col["peak_reserved"]])), gb(f[col["headroom_bytes"]]),
          gb(f[col["next_needs_bytes"]]), note }'
    awk -v w="$w" -v p="$p" "$row_awk" "$DIR/fit-$label.csv" >> "$md"
    [ -s "$DIR/plots/fit-$label.png" ] && printf '\n![fit %s %s](plots/fit-%s.png)\n\n' "$w" "$p" "$label" >> "$md.img"
    n=$((n + 1))
  done
done
[ -f "$md.img" ] && { echo >> "$md"; cat "$md.img" >> "$md"; rm -f "$md.img"; }
if [ -f "$DIR/report.md" ]; then { echo; cat "$md"; } >> "$DIR/report.md"; fi
echo "bench_fit: $n fit searches under $limit -> $md" >&2
