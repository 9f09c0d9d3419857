#!/bin/sh
# advise_oom_eval.sh [FRAGBENCH] - issue 37's check, on this machine (no GPU): for each job
# of tests/data/recorded/advise_oom, advise from its OOM snapshot with PyTorch's message,
# advise from its whole run under the same limit, and the held-out reruns (two other data
# orders, run for real on an H100 under that limit with PyTorch's default and with
# expandable segments: reruns.jsonl). One block per job.
set -u
FB=${1:-build/fragbench}
D=tests/data/recorded/advise_oom
for j in "$D"/*/; do
  j=${j%/}; n=$(basename "$j")
  [ -f "$j/oom.txt" ] || continue
  L=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['limit'])" "$j/limit.json")
  oom=$("$FB" advise --trace "$j/oom.pickle.gz" --oom-message "$j/oom.txt" 2>"/tmp/adv_oom_$n.err" | tail -n 1)
  whole=$("$FB" advise --trace "$j/whole.pickle.gz" --limit "${L}B" 2>"/tmp/adv_whole_$n.err" | tail -n 1); wrc=$?
  echo "== $n, limit $L bytes"
  echo "  OOM snapshot:   ${oom:-no recommendation} ($(grep -m1 '^Recommended' "/tmp/adv_oom_$n.err" | cut -c1-120))"
  echo "  whole run:      ${whole:-no recommendation}$(grep -q 'below the trace.s peak requested' "/tmp/adv_whole_$n.err" && echo ' (the whole run asks for more than the limit itself)')"
  python3 - "$j/reruns.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print("  rerun seed %d %-25s %s, peak reserved %s" % (r["seed"], r["conf"] or "default", "completed" if r["ok"] else "ran out",
          format(r["peak_reserved"], ",")))
PY
done
