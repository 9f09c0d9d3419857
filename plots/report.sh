#!/bin/sh
# report.sh - `make report` (newest results/bench-*/) or `make report RUN=DIR`: runs
# `fragbench report DIR`, which writes DIR/report.md (and DIR/report.html, the same as one
# self-contained page with every plot drawn inline) from the folder's CSVs and env.txt,
# embedding the plots found in DIR/plots/ (FORMAT=svg embeds the SVGs), and the plot
# data that `make plots` draws; with earlier results/bench-*/ runs beside DIR, the history
# of peak reserved across them first (DIR/history.md). Renders on GitHub as it is.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
me=report
. "$here/run_folder.sh"
[ -d "$run/plots" ] && ls "$run/plots"/*."$fmt" >/dev/null 2>&1 ||
  echo "report: no plots in $run/plots (make plots RUN=$run draws them); the report goes without" >&2
# earlier bench runs beside this one (results/bench-*/ with a runs.csv, up to this one by
# stamp): peak reserved across them, DIR/history.md and DIR/plots/history-*.png
# (`fragbench history`), which report.md includes
case $(basename "$run") in
  bench-*)
    set --
    for d in "$(dirname "$run")"/bench-*/; do
      d=${d%/}
      [ -f "$d/runs.csv" ] || continue
      set -- "$@" "$d"
      [ "$d" = "$run" ] && break
    done
    if [ $# -ge 2 ]; then
      FB_PLOTS_DIR=$here "$bin" history "$@" --out "$run/history.md" --plot "$run/plots" --quiet ||
        echo "report: fragbench history failed: the report goes without the history" >&2
    fi ;;
esac
"$bin" report "$run" --format "$fmt"
