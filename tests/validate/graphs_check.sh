#!/bin/sh
# graphs_check.sh [FRAGBENCH] - part of `make validate`: the graphed PyTorch jobs (CUDA graphs'
# private pools, MemPool; tests/data/recorded/pools and graphs/heldout) replayed with the
# recorded allocator on sim and, where a GPU is visible, on cuda, against PyTorch's own peak
# reserved from the recording (runs.jsonl). One line per snapshot and device; closing line
# `graphed jobs: N equal to PyTorch's peak reserved, M not`.
set -u
FB=${1:-build/fragbench}
devs="sim"
"$FB" device --device cuda >/dev/null 2>&1 && devs="sim cuda"
eq=0 ne=0
for set in tests/data/recorded/pools tests/data/recorded/graphs/heldout; do
  python3 - "$set/runs.jsonl" <<'PY' > /tmp/graphs_check.$$ || exit 2
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["job"] + ("_exp" if r["conf"] else ""), r["peak_reserved"])
PY
  while read -r name want; do
    for dev in $devs; do
      got=$("$FB" run --trace "$set/$name.pickle.gz" --allocator recorded --device "$dev" --quiet --out - 2>/dev/null |
            awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i; next} {print $c["peak_reserved"]}')
      if [ "$got" = "$want" ]; then eq=$((eq + 1)); v=equal; else ne=$((ne + 1)); v="DIFFERS"; fi
      printf '%-44s %-4s PyTorch %14s fragbench %14s %s\n' "$set/$name" "$dev" "$want" "${got:-?}" "$v"
    done
  done < /tmp/graphs_check.$$
done
rm -f /tmp/graphs_check.$$
echo "graphed jobs: $eq equal to PyTorch's peak reserved, $ne not"
[ "$ne" = 0 ]
