# run_folder.sh - sourced by plots/plots.sh and plots/report.sh: the run folder (the
# argument, RUN=, or the newest results/bench-*/ that has a runs.csv; any folder of
# results CSVs will do) into $run, and the
# binary that reads it into $bin (FRAGBENCH=, else build/fragbench). $me names the caller.
run=${1:-${RUN:-}}
if [ -z "$run" ]; then
  # the newest run folder that has its runs.csv (names sort by their UTC stamp)
  for d in "$root"/results/bench-*/; do
    [ -f "$d/runs.csv" ] && run=$d
  done
  if [ -z "$run" ]; then
    echo "$me: no results/bench-*/ folder; run 'make bench' first or pass RUN=path" >&2
    exit 2
  fi
fi
run=${run%/}
if ! ls "$run"/*.csv >/dev/null 2>&1; then
  echo "$me: no results CSV in $run (RUN must be a folder of results CSVs, such as a bench run)" >&2
  exit 2
fi
bin=${FRAGBENCH:-$root/build/fragbench}
if [ ! -x "$bin" ]; then
  echo "$me: $bin not found: run make first (or set FRAGBENCH=path)" >&2
  exit 2
fi
fmt=${FORMAT:-png}
case $fmt in
  png|svg) ;;
  *) echo "$me: FORMAT=$fmt: expected png or svg" >&2; exit 2 ;;
esac
