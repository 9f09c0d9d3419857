#!/bin/sh
# report.sh - `make report` (newest results/bench-*/) or `make report RUN=DIR`: runs
# `fragbench report DIR`, which writes DIR/report.md (and DIR/report.html, the same as one
# self-contained page with every plot drawn inline) from the folder's CSVs and env.txt,
# embedding the plots found in DIR/plots/ (FORMAT=svg embeds the SVGs), and the plot
# data that `make plots` draws. Renders on GitHub as it is.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
me=report
. "$here/run_folder.sh"
[ -d "$run/plots" ] && ls "$run/plots"/*."$fmt" >/dev/null 2>&1 ||
  echo "report: no plots in $run/plots (make plots RUN=$run draws them); the report goes without" >&2
"$bin" report "$run" --format "$fmt"
