#!/bin/sh
# async_unreached_cap.sh [FRAGBENCH] [ROUNDS] - on a GPU host, after `make`: whether async
# on the GPU makes its uncapped run under a cap it never reached (what make bench's async
# sweep and searches take from its uncapped rows: uncapped_rows.h). Every bundled input
# (the bench's 12 generators and 5 traces), async on cuda: uncapped in one process, as
# make bench's uncapped rows run, and at 1.5x and 2.0x its peak requested (at or above
# what it reserves uncapped on every input: 1.01-1.37x on the H100) in one process, as
# its sweep runs, ROUNDS (default 3) times each, alternated. One line per input: the peak
# reserved of every uncapped run, of every capped one, and the verdict: "same" where the
# capped runs' figures are among the uncapped runs', "inside" where they lie within the
# uncapped runs' range (a replay of async on a GPU is not repeatable: docs/async-pool.md,
# finding 11), "OUTSIDE" otherwise, and any capped run that did not complete.
set -eu
FB=${1:-build/fragbench}
ROUNDS=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
srcs=""
for w in $("$FB" list | awk '/^workloads/{s=1;next} /^$/{s=0} s && /^  [a-z]/{print $1}' | grep -v -E '^(script|random)$'); do
  srcs="$srcs --workload $w"
done
for t in tests/data/*.pickle tests/data/*.pickle.gz tests/data/*.rmm.csv; do [ -f "$t" ] && srcs="$srcs --trace $t"; done
r=1
while [ "$r" -le "$ROUNDS" ]; do
  # shellcheck disable=SC2086
  "$FB" run $srcs --allocator async --device cuda --quiet --out "$tmp/u$r.csv"
  # shellcheck disable=SC2086
  "$FB" run $srcs --allocator async --device cuda --cap-x 1.5,2.0 --quiet --out "$tmp/c$r.csv"
  r=$((r + 1))
done
cat "$tmp"/u*.csv "$tmp"/c*.csv | awk -F, '
  $1 == "run_id" { for (i = 1; i <= NF; i++) h[$i] = i; next }
  {
    w = $h["workload"]; if (!(w in seen)) { seen[w] = 1; order[++n] = w }
    v = $h["peak_reserved"]
    if ($h["cap_bytes"] == "") { u[w] = u[w] " " v; if (!(w in lo) || v < lo[w]) lo[w] = v; if (v > hi[w]) hi[w] = v; has[w, v] = 1 }
    else { c[w] = c[w] " " v; if ($h["status"] != "ok") bad[w] = bad[w] " " $h["cap_x"] "x:" $h["status"]; cv[w] = cv[w] " " v }
  }
  END {
    printf "%-32s %-10s %s | %s\n", "input", "verdict", "uncapped peak reserved", "at 1.5x and 2.0x"
    for (k = 1; k <= n; k++) {
      w = order[k]; m = split(cv[w], x, " "); same = 1; inside = 1
      for (i = 1; i <= m; i++) { if (!has[w, x[i]]) same = 0; if (x[i] + 0 < lo[w] + 0 || x[i] + 0 > hi[w] + 0) inside = 0 }
      verdict = same ? "same" : inside ? "inside" : "OUTSIDE"
      if (bad[w] != "") verdict = verdict ", ran out:" bad[w]
      printf "%-32s %-10s%s |%s\n", w, verdict, u[w], c[w]
    }
  }'
