#!/bin/sh
# plots.sh - draws the plots of one bench run folder: `make plots` (newest
# results/bench-*/), `make plots RUN=results/bench-X`, or `sh plots/plots.sh DIR`.
# PNG (pngcairo) by default, SVG with FORMAT=svg. Writes DIR/plots/*.png (or .svg) and
# keeps the gnuplot data it drew from in DIR/plots/data/:
#   overhead    peak reserved / peak requested per workload x strategy   (runs.csv)
#   mincap      smallest completing cap / peak requested                 (mincap.csv)
#   latency     host ns/op, p50, p99 per strategy                        (runs.csv)
#   timeline-W  requested / allocated / reserved over the run, per strategy (timeline-W.csv)
#   capsweep-W  completed or OOM, and peak reserved, against the cap     (capsweep.csv)
# Whatever workloads and strategies the CSVs hold are drawn; nothing here names one.
# Without gnuplot it prints how to install it and exits 0 (plots are optional).
set -eu

gpdir=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$gpdir")

if ! command -v gnuplot >/dev/null 2>&1; then
  echo "plots skipped: gnuplot not installed (apt-get install gnuplot-nox)"
  exit 0
fi

run=${1:-${RUN:-}}
if [ -z "$run" ]; then
  # the newest run folder that has its runs.csv (names sort by their UTC stamp)
  for d in "$root"/results/bench-*/; do
    [ -f "$d/runs.csv" ] && run=$d
  done
  if [ -z "$run" ]; then
    echo "plots: no results/bench-*/ folder; run 'make bench' first or pass RUN=path" >&2
    exit 2
  fi
fi
run=${run%/}
if [ ! -f "$run/runs.csv" ]; then
  echo "plots: $run/runs.csv not found (RUN must be a bench run folder)" >&2
  exit 2
fi

fmt=${FORMAT:-png}
case $fmt in
  png|svg) ;;
  *) echo "plots: FORMAT=$fmt: expected png or svg" >&2; exit 2 ;;
esac

out="$run/plots"
data="$out/data"
mkdir -p "$data"
rm -f "$data"/*.dat "$data"/*.meta.gp

# inputs that exist, runs.csv first (it fixes each strategy's colour)
set -- "$run/runs.csv"
for f in "$run/mincap.csv" "$run/capsweep.csv" "$run"/timeline-*.csv; do
  [ -f "$f" ] && set -- "$@" "$f"
done

list="$data/plots.txt"
awk -f "$gpdir/fb.awk" -f "$gpdir/prep.awk" -v D="$data" "$@" > "$list"

# device name: env.txt wins over the CSV's
envname=$(sed -n 's/^device_name:[[:space:]]*//p' "$run/env.txt" 2>/dev/null | head -n 1)
if [ -n "$envname" ]; then
  printf 'device_name = "%s"\n' "$(printf '%s' "$envname" | sed 's/[\\"]/\\&/g')" > "$data/device.meta.gp"
fi

made=0 failed=0
while read -r script name; do
  img="$out/$name.$fmt"
  if gnuplot -e "fmt='$fmt'; out='$img'; dat='$data/$name.dat'; meta='$data/$name.meta.gp'; dev='$data/device.meta.gp'; gpdir='$gpdir'" \
       "$gpdir/$script.gp" 2> "$data/$name.log" && [ -s "$img" ]; then
    made=$((made + 1))
    # gnuplot warnings are worth seeing; the log stays next to the data
    [ -s "$data/$name.log" ] && sed "s|^|plots: $name: |" "$data/$name.log" >&2
  else
    failed=$((failed + 1))
    echo "plots: $name failed:" >&2
    sed 's/^/  /' "$data/$name.log" >&2
  fi
done < "$list"

echo "plots: $made written to $out/ ($fmt)${failed:+, $failed failed}" | sed 's/, 0 failed//'
[ "$failed" -eq 0 ]
