#!/bin/sh
# async_unreached_cap.sh [FRAGBENCH] [ROUNDS] - on a GPU host, after `make`: whether async
# on the GPU makes its uncapped run under a cap it never reached (what make bench's async
# sweep and searches take from its uncapped rows: uncapped_rows.h). Every bundled input
# (the bench's 12 generators and 5 traces), async on cuda: uncapped in one process, as
# make bench's uncapped rows run, and at 1.5x and 2.0x its peak requested (at or above
# what it reserves uncapped on every input: 1.01-1.37x on the H100) in one process, as
# its sweep runs, ROUNDS (default 3) times each, alternated. One line per input: the peak
# reserved of every uncapped run and of every capped one, "same" where every capped run's
# figure is among the uncapped runs' (else "spread": a replay of async on a GPU is not
# repeatable, docs/async-pool.md finding 11), whether the capped runs' median is above,
# below or equal to the uncapped runs', and any capped run that did not complete; then how
# many inputs went each way (a cap that changed the runs would move them one way).
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
  function median(list,   a, m, i, j, t) {
    m = split(list, a, " ")
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  $1 == "run_id" { for (i = 1; i <= NF; i++) h[$i] = i; next }
  {
    w = $h["workload"]; if (!(w in seen)) { seen[w] = 1; order[++n] = w }
    v = $h["peak_reserved"]
    if ($h["cap_bytes"] == "") { u[w] = u[w] " " v; has[w, v] = 1 }
    else { c[w] = c[w] " " v; if ($h["status"] != "ok") bad[w] = bad[w] " " $h["cap_x"] "x:" $h["status"] }
  }
  END {
    printf "%-32s %-8s %-22s %s | %s\n", "input", "verdict", "capped median", "uncapped peak reserved", "at 1.5x and 2.0x"
    for (k = 1; k <= n; k++) {
      w = order[k]; m = split(c[w], x, " "); same = 1
      for (i = 1; i <= m; i++) if (!has[w, x[i]]) same = 0
      mu = median(u[w]); mc = median(c[w])
      dir = mc > mu ? "above" : mc < mu ? "below" : "equal"; nd[dir]++
      printf "%-32s %-8s %-22s%s |%s%s\n", w, same ? "same" : "spread", sprintf("%s (%+.2f%%)", dir, 100 * (mc - mu) / mu), u[w], c[w],
             bad[w] != "" ? "   ran out:" bad[w] : ""
    }
    printf "the capped runs\047 median against the uncapped runs\047: above on %d inputs, below on %d, equal on %d\n", nd["above"], nd["below"], nd["equal"]
  }'
