#!/bin/sh
# plots.sh - draws the plots of one bench run folder: `make plots` (newest
# results/bench-*/), `make plots RUN=results/bench-X`, or `sh plots/plots.sh DIR`.
# `fragbench report DIR` writes the gnuplot data (DIR/plots/data/: NAME.dat, NAME.meta.gp
# and plots.txt, the list of "SCRIPT NAME" to draw; see harness/report/plot_data.h);
# this script only draws each with plots/SCRIPT.gp into DIR/plots/NAME.png (FORMAT=svg
# for SVG), then has the report written again so that it embeds what was drawn.
# Whatever workloads and strategies the CSVs hold are drawn; nothing here names one.
# Without gnuplot it prints how to install it and exits 0 (plots are optional).
set -eu
gpdir=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$gpdir")
me=plots
. "$gpdir/run_folder.sh"

if ! command -v gnuplot >/dev/null 2>&1; then
  echo "plots skipped: gnuplot not installed (apt-get install gnuplot-nox)"
  exit 0
fi

out="$run/plots"
data="$out/data"
"$bin" report "$run" --format "$fmt" --quiet

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
done < "$data/plots.txt"

echo "plots: $made written to $out/ ($fmt)${failed:+, $failed failed}" | sed 's/, 0 failed//'
"$bin" report "$run" --format "$fmt" --quiet
[ "$failed" -eq 0 ]
