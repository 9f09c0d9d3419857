#!/bin/sh
# report.sh - `make report` (newest results/bench-*/) or `make report RUN=DIR`: writes
# DIR/report.md from DIR's env.txt, runs.csv, mincap.csv and capsweep.csv, with the
# plots that `make plots` drew into DIR/plots/ embedded by relative path (FORMAT=svg
# embeds the SVGs). The numbers come from the CSVs; the text is derived from them
# (plots/report.awk). Renders on GitHub as it is.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
run=${1:-${RUN:-}}
if [ -z "$run" ]; then
  # the newest run folder that has its runs.csv (names sort by their UTC stamp)
  for d in "$root"/results/bench-*/; do
    [ -f "$d/runs.csv" ] && run=$d
  done
  if [ -z "$run" ]; then
    echo "report: no results/bench-*/ folder; run 'make bench' first or pass RUN=path" >&2
    exit 2
  fi
fi
run=${run%/}
if [ ! -f "$run/runs.csv" ]; then
  echo "report: $run/runs.csv not found (RUN must be a bench run folder)" >&2
  exit 2
fi
fmt=${FORMAT:-png}

set -- "$run/runs.csv"
for f in "$run/mincap.csv" "$run/capsweep.csv"; do
  [ -f "$f" ] && set -- "$@" "$f"
done
envf=$run/env.txt
[ -f "$envf" ] || envf=/dev/null
imgs=""
if [ -d "$run/plots" ]; then
  for f in "$run/plots"/*."$fmt"; do
    [ -s "$f" ] && imgs="$imgs $(basename "$f")"
  done
fi
[ -n "$imgs" ] || echo "report: no plots in $run/plots (make plots RUN=$run draws them); the report goes without" >&2

awk -f "$here/fb.awk" -f "$here/report.awk" -v title="$(basename "$run")" -v imgs="$imgs" -v FMT="$fmt" \
  "$envf" "$@" > "$run/report.md.tmp"
mv "$run/report.md.tmp" "$run/report.md"
echo "report: $run/report.md"
