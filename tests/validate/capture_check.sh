#!/bin/sh
# capture_check.sh [FRAGBENCH] - scripts/capture.py for real, on a GPU host with PyTorch:
# two tiny jobs that run out of memory under torch.cuda.set_per_process_memory_fraction
# (a ~2 GiB limit; only small tensors), one letting torch.OutOfMemoryError go uncaught,
# one catching it inside the script and going on (the OOM observer's path), each run
# through the wrapper; then `fragbench explain`, `advise` and `fit` on each capture with
# no limit flag (fit needs its generator: --workload and --vary only, a small GPT). One line per step,
# PASS or FAIL, and a closing line `N passed, M failed`; exit 1 when any failed.
# About 30 s on an H100 (two PyTorch start-ups dominate).
#
#   PYTHON=python3            the interpreter with torch
#   CAPTURE_CHECK_OUT=DIR     where the jobs and captures go (default build/capture_check)
#   CAPTURE_LIMIT_GIB=2       the limit the jobs run under, in GiB (a fraction of the GPU's total)
set -u
FB=${1:-build/fragbench}
PY=${PYTHON:-python3}
OUT=${CAPTURE_CHECK_OUT:-build/capture_check}
GIB=${CAPTURE_LIMIT_GIB:-2}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$FB" ] || { echo "capture_check: $FB not built (make)" >&2; exit 2; }
"$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
  { echo "capture_check: needs PyTorch with a CUDA device ($PY)" >&2; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT"
pass=0 fail=0
step() {   # step NAME RC-OK-TEST: one line
  if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "PASS $1"; else fail=$((fail + 1)); echo "FAIL $1${3:+: $3}"; fi
}

# the job: tensors of mixed sizes, every third one freed (holes), until the limit is hit
cat > "$OUT/job.py" <<'EOF'
import sys, torch
mode, gib = sys.argv[1], float(sys.argv[2])
total = torch.cuda.get_device_properties(0).total_memory
torch.cuda.set_per_process_memory_fraction(gib * (1 << 30) / total)
sizes_mib = [96, 160, 64, 224, 128, 192, 40]
keep = []
def grow():
    for i in range(10000):
        keep.append(torch.empty(sizes_mib[i % len(sizes_mib)] << 20, dtype=torch.uint8, device="cuda"))
        if i % 3 == 2:
            keep.pop(0)
if mode == "uncaught":
    grow()
else:
    try:
        grow()
    except torch.OutOfMemoryError as e:
        print("caught:", str(e).split(".")[0])
    keep.clear()
    x = torch.ones(1 << 20, device="cuda")   # and the job goes on
    print("went on:", float(x.sum()))
EOF

meta_field() {   # meta_field DIR KEY
  "$PY" -c 'import json, sys; v = json.load(open(sys.argv[1]))[sys.argv[2]]; print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)' \
    "$1/snapshot.meta.json" "$2" 2>/dev/null
}

for mode in uncaught caught; do
  d="$OUT/$mode"
  t0=$(date +%s)
  "$PY" "$ROOT/scripts/capture.py" --out "$d" "$OUT/job.py" "$mode" "$GIB" >"$OUT/$mode.out" 2>"$OUT/$mode.err"
  rc=$?
  want_rc=1; want_caught=false
  [ $mode = caught ] && { want_rc=0; want_caught=true; }
  ok=0; why=""
  [ $rc = $want_rc ] || { ok=1; why="exit $rc, expected $want_rc (see $OUT/$mode.err)"; }
  for f in snapshot.pickle.gz snapshot.meta.json oom_message.txt; do
    [ -s "$d/$f" ] || { ok=1; why="${why:+$why; }no $d/$f"; }
  done
  step "$mode: job ran out of memory, capture wrote snapshot, message, side file ($(($(date +%s) - t0)) s)" $ok "$why"
  ok=0; why=""
  c=$(meta_field "$d" caught); [ "$c" = $want_caught ] || { ok=1; why="caught=$c, expected $want_caught"; }
  grep -q "CUDA out of memory" "$d/oom_message.txt" 2>/dev/null || { ok=1; why="${why:+$why; }oom_message.txt is not PyTorch's text"; }
  grep -q "fit --trace" "$OUT/$mode.err" || { ok=1; why="${why:+$why; }the three commands were not printed"; }
  lim=$(meta_field "$d" limit_bytes); frac=$(meta_field "$d" memory_fraction); tot=$(meta_field "$d" device_total_bytes)
  want=$("$PY" -c "import sys; print(int(float(sys.argv[1]) * float(sys.argv[2])))" "$frac" "$tot" 2>/dev/null)
  [ -n "$lim" ] && [ "$lim" = "$want" ] || { ok=1; why="${why:+$why; }limit_bytes $lim, fraction $frac x total $tot = $want"; }
  step "$mode: side file: caught=$c, limit $lim bytes = fraction $frac x $tot, PyTorch's message kept" $ok "$why"

  snap="$d/snapshot.pickle.gz"
  # the limit fragbench reads without a flag, against the one it reads from PyTorch's text
  "$FB" explain --trace "$snap" >"$d/explain.txt" 2>"$d/explain.err"; rc=$?
  ok=0; why=""
  [ $rc = 0 ] || { ok=1; why="exit $rc: $(head -c 300 "$d/explain.err")"; }
  grep -q "($lim bytes): from snapshot.meta.json beside the snapshot" "$d/explain.err" || { ok=1; why="${why:+$why; }no side-file limit sentence"; }
  msg_lim=$("$FB" explain --trace "$snap" --oom-message "$d/oom_message.txt" 2>&1 >/dev/null | sed -n 's/.*limit [^(]*(\([0-9]*\) bytes): from PyTorch.*/\1/p' | head -n 1)
  [ -n "$msg_lim" ] && "$PY" -c "import sys; a, b = int(sys.argv[1]), int(sys.argv[2]); sys.exit(0 if a <= b < a + 0.01 * 2**30 else 1)" "$msg_lim" "$lim" ||
    { ok=1; why="${why:+$why; }side file's $lim is not inside the message's printed interval from $msg_lim"; }
  step "$mode: fragbench explain (no flags): $(sed -n 's/^fragbench explain: //p' "$d/explain.err" | head -n 1)" $ok "$why"

  "$FB" advise --trace "$snap" >"$d/advise.txt" 2>"$d/advise.err"; rc=$?
  ok=0; why=""
  [ $rc = 0 ] || [ $rc = 1 ] || { ok=1; why="exit $rc: $(tail -n 2 "$d/advise.err" | head -c 300)"; }   # 1: nothing fits - an answer
  grep -q "beside the snapshot" "$d/advise.err" || { ok=1; why="${why:+$why; }the limit did not come from the side file"; }
  step "$mode: fragbench advise (no flags): exit $rc, $(head -n 1 "$d/advise.txt")" $ok "$why"

  "$FB" fit --trace "$snap" --workload 'train_loop:arch=gpt,layers=4,hidden=512,heads=8,ffn=2048,seq=256,iters=2' --vary batch >"$d/fit.csv" 2>"$d/fit.err"; rc=$?
  ok=0; why=""
  [ $rc = 0 ] || { ok=1; why="exit $rc: $(tail -n 2 "$d/fit.err" | head -c 300)"; }
  grep -q "beside the snapshot" "$d/fit.err" || { ok=1; why="${why:+$why; }the limit did not come from the side file"; }
  grep -q ",$lim," "$d/fit.csv" || { ok=1; why="${why:+$why; }limit_bytes is not $lim"; }
  step "$mode: fragbench fit --workload --vary (no limit flag): $(grep '^fit:' "$d/fit.err" | head -n 1 | cut -c1-120)" $ok "$why"
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
