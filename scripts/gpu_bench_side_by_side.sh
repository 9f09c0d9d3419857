#!/bin/sh
# gpu_bench_side_by_side.sh OUTDIR REFTREE [N] - on a GPU host: `make bench` in this tree and
# in REFTREE (another checkout, e.g. `git archive COMMIT | tar -x -C REFTREE`), each built
# first (make -j), alternated this, reference, this, reference... N times each (default 2),
# so that the machine's spells fall on both alike. Per run one line in OUTDIR/summary.txt:
# wall (timed around make bench), its exit status, the uncapped rows and the GPU phase (from
# its timing.csv: the `run` step, and from its end to the last GPU job's end), the GPU jobs'
# seconds summed (async's, the confirmations'), and the load at its start; each run's
# timing.csv, env.txt and CSVs in OUTDIR/bench.tgz.
set -u
OUT=${1:?usage: gpu_bench_side_by_side.sh OUTDIR REFTREE [N]}
REF=${2:?usage: gpu_bench_side_by_side.sh OUTDIR REFTREE [N]}
N=${3:-2}
mkdir -p "$OUT/b"
top=$(pwd)
REF=$(cd "$REF" && pwd) || exit 2
for t in "$top" "$REF"; do
  (cd "$t" && make -j"$(nproc)" > "$OUT/build-$(basename "$t").log" 2>&1) || { tail -n 20 "$OUT/build-$(basename "$t").log"; exit 1; }
done
i=1
while [ "$i" -le "$N" ]; do
  for v in this ref; do
    if [ "$v" = this ]; then cd "$top"; else cd "$REF"; fi
    rm -rf results/bench-side
    ld=$(uptime | sed 's/.*load/load/')
    a=$(date +%s.%N)
    BENCH_DIR=results/bench-side make bench > "$OUT/b/$v-$i.log" 2>&1
    rc=$?
    b=$(date +%s.%N)
    for f in timing.csv env.txt runs.csv capsweep.csv mincap.csv; do cp "results/bench-side/$f" "$OUT/b/$v-$i-$f" 2>/dev/null; done
    awk -F, -v v="$v" -v i="$i" -v w="$(echo "$a $b" | awk '{printf "%.1f", $2 - $1}')" -v rc="$rc" -v ld="$ld" '
      NR > 1 && $1 == "run" { re = $3 + $4; rs = $4 }
      NR > 1 && ($1 == "mincap" || $1 == "async_gpu") { e = $3 + $4; if (e > ge) ge = e; js[$1] += $4 }
      END { printf "BENCH %s %s: wall %s s (exit %s); uncapped rows %.1f s; GPU phase %.1f s; GPU job-seconds async %.1f, confirmations %.1f; %s\n",
                   v, i, w, rc, rs, (ge > re ? ge - re : 0), js["async_gpu"], js["mincap"], ld }' "results/bench-side/timing.csv" |
      tee -a "$OUT/summary.txt"
  done
  i=$((i + 1))
done
cd "$top" && tar -czf "$OUT/bench.tgz" -C "$OUT" b && rm -rf "$OUT/b"
