#!/bin/sh
# run.sh - `make test-browser`: fragbench's pages opened from disk in a real headless
# Chromium (the distribution's: apt-get install chromium; CHROMIUM= another binary). It
# writes explain pages of OOM snapshots (one strategy, two side by side, a snapshot with
# stacks, a recorded trace that dies under a limit) with --html and --blocks-csv, and the
# report.html of a small sim bench run (RUN=DIR: of that run folder instead), then
# tests/browser/check.mjs checks each page in the browser (see its header) and keeps a
# screenshot of each in $OUT (default build/browser/). Needs node and the pinned
# playwright-core (npm ci here, from package-lock.json; no browser download).
# Exit 0 when every check passed; 1 when one failed; 2 when something it needs is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
out=${OUT:-build/browser}
bin=${FRAGBENCH:-build/fragbench}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export CHROMIUM
[ -x "$CHROMIUM" ] || { echo "test-browser: $CHROMIUM not found (apt-get install chromium, or CHROMIUM=path)" >&2; exit 2; }
command -v node >/dev/null 2>&1 || { echo "test-browser: node not found (node 18 or later)" >&2; exit 2; }
[ -x "$bin" ] || { echo "test-browser: $bin not found: run make first" >&2; exit 2; }
if [ ! -d "$here/node_modules/playwright-core" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) || { echo "test-browser: npm ci failed in $here" >&2; exit 2; }
fi
rm -rf "$out"
mkdir -p "$out"

jobs=""
# explain NAME TRACE [flags...]: the page and its blocks, the text kept beside them
explain() {
  name=$1; shift
  if ! "$bin" explain --html "$out/$name.html" --blocks-csv "$out/$name.csv" "$@" > "$out/$name.txt" 2> "$out/$name.err"; then
    echo "test-browser: fragbench explain $* failed:" >&2
    cat "$out/$name.err" >&2
    exit 1
  fi
  jobs="$jobs explain $out/$name.html $out/$name.csv"
}
explain explain-oom_fragmented --trace tests/variants/oom_fragmented.pickle
explain explain-oom_fragmented-side-by-side --trace tests/variants/oom_fragmented.pickle --allocator caching --allocator expandable
explain explain-oom_frames --trace tests/variants/oom_frames.pickle
explain explain-gpt_train_short_frames --trace tests/data/gpt_train_short_frames.pickle --allocator recorded --allocator expandable
explain explain-gpt_train-6GiB --trace tests/data/gpt_train.pickle.gz --limit 6GiB --allocator caching --allocator expandable

run=${RUN:-}
if [ -z "$run" ]; then
  run="$out/bench"
  echo "test-browser: a small sim bench run into $run" >&2
  BENCH_DIR="$run" DEVICE=sim WORKLOADS="leaky_losses" TRACES="tests/variants/oom_frames.pickle tests/data/gpt_train_short_frames.pickle" \
    ALLOCATORS="caching expandable bfc raw" sh scripts/bench.sh "$bin" > "$out/bench.log" 2>&1 ||
    { echo "test-browser: the bench run failed (see $out/bench.log)" >&2; tail -20 "$out/bench.log" >&2; exit 1; }
fi
# the bench wrote report.html (plots/report.sh); a folder without one gets it now
[ -s "$run/report.html" ] || "$bin" report "$run" --quiet || { echo "test-browser: fragbench report $run failed" >&2; exit 1; }
jobs="$jobs report $run/report.html $run/report.md"

# shellcheck disable=SC2086
node "$here/check.mjs" "$out" $jobs
