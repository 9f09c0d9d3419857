#!/bin/sh
# regress.sh - memory regression tracking on the deterministic sim device.
#
#   make regress     sh tests/regress.sh BIN             rerun the suite, compare with the baseline
#   make baseline    sh tests/regress.sh BIN --refresh   rewrite results/baseline-sim.csv on purpose
#
# The suite (fixed below): every allocator `BIN list` offers, against a few small script
# workloads that exercise the allocators' size classes, streams, empty_cache and OOM
# recovery; the synthetic generators named in GENERATORS that this build has (MULTI:
# also on two sim devices, rank per device); and the shared real traces in tests/data
# whose format this build reads. Each source runs
# uncapped and under caps of CAPS x its own peak requested, with --validate (a validator
# failure stops the suite, exit 2). `mincap` rows are added for the script workloads
# once the binary has that command.
#
# The comparison (`BIN compare BASELINE NEW --tolerance results/tolerance.csv`, the same
# command a user's CI runs): every memory figure exactly or within its tolerance; host
# timing beyond a loose factor is a warning only. Exit 0 = no memory regression; 1 = a
# memory figure changed or a baseline row is missing (new rows are reported, and pass);
# 2 = the suite could not run.
#
# Options: --allocator NAME (repeatable) runs and compares only those allocators' rows;
# --keep DIR keeps the new CSV there. REGRESS_BASELINE=FILE compares against another file.
set -eu

usage() { echo "usage: sh tests/regress.sh BIN [--refresh] [--allocator NAME]... [--keep DIR]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BIN=$1; shift
refresh=0 only="" keep=""
while [ $# -gt 0 ]; do
  case $1 in
    --refresh) refresh=1 ;;
    --allocator) [ $# -ge 2 ] || usage; only="$only $2"; shift ;;
    --keep) [ $# -ge 2 ] || usage; keep=$2; shift ;;
    *) usage ;;
  esac
  shift
done

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
cd "$root"   # trace paths in the rows are relative to the repository root
baseline=${REGRESS_BASELINE:-results/baseline-sim.csv}
tolerance=results/tolerance.csv
[ -x "$BIN" ] || { echo "regress: $BIN: not built (make)" >&2; exit 2; }

# ---- the suite -------------------------------------------------------------------------
CAPS=1.05,1.3
# script workloads: small (1 MiB and under), large-pool (1..10 MiB) and own-segment
# (>= 10 MiB) requests, splits and reuse, two streams, empty_cache, a growing live set
SCRIPTS="
a1=512/a2=3MiB/a3=5MiB/a4=700KiB/f2/a5=1500KiB/i/f1/f3/a6=30MiB/a7=9MiB/f4/f5/i/a8=2MiB/f6/f7/f8/i,repeat=12
a1=4MiB@1/a2=4MiB@2/a3=6MiB@1/f1/a4=3MiB@2/a5=8KiB@1/f2/i/f3/a6=12MiB@2/f4/f5/f6/a7=1MiB@1/f7/i/e,repeat=10
a1=6MiB/a2=6MiB/a3=6MiB/a4=6MiB/f2/f4/a5=7MiB/a6=11MiB/a7=2MiB/f1/f3/i/a8=40MiB/f5/f6/f7/a9=25MiB/i/e/f8/f9/i,repeat=8
"
# synthetic generators (NAME[:params]; defaults unless given), where this build has them
GENERATORS="train_loop varlen leaky_losses checkpointing amp model_switch grad_accumulation eval_accumulate
ddp_buckets zero_shard offload random:events=60000,live=400,streams=2,iter_every=2000"
# multi-device: ranks of one workload on N sim devices (per-device rows + device=all)
MULTI="ddp_buckets:imbalance=0.5,iters=3"
MULTI_DEVICES=sim:2
# the shared real traces (tests/data/README.md)
TRACES="tests/data/gpt_train_short_frames.pickle tests/data/leaky_losses.pickle.gz tests/data/leaky_losses.rmm.csv tests/data/resnet_varsize.pickle.gz tests/data/gpt_train.pickle.gz"
# ----------------------------------------------------------------------------------------

list=$("$BIN" list) || { echo "regress: '$BIN list' failed" >&2; exit 2; }
section() { printf '%s\n' "$list" | awk -v s="$1" 'index($0, s) == 1 {on=1; next} /^$/ {on=0} on && /^  [a-z]/ {print $1}'; }
allocators=$(section allocators)
workloads=$(section workloads)
if [ -n "$only" ]; then
  for a in $only; do
    printf '%s\n' "$allocators" | grep -qx "$a" || { echo "regress: allocator $a: not in '$BIN list'" >&2; exit 2; }
  done
  allocators=$only
fi
aargs=""
for a in $allocators; do aargs="$aargs --allocator $a"; done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fbregress.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
new=$tmp/new.csv
: > "$tmp/rows"
notes=""
t0=$(date +%s)

# run_one ARGS...: one invocation's rows appended; exit 2 on an error that is not "this
# build cannot read that trace"
run_one() {
  rc=0
  "$BIN" "$@" $aargs --device sim --seed 1 --validate --quiet --out "$tmp/part.csv" 2> "$tmp/err" || rc=$?
  if [ $rc -ne 0 ]; then
    if grep -q "not a trace format fragbench reads" "$tmp/err"; then return 3; fi
    echo "regress: '$(basename "$BIN") $*' exited $rc:" >&2
    sed 's/^/  /' "$tmp/err" >&2
    exit 2
  fi
  skip=1; head -n 1 "$tmp/part.csv" | grep -q '^#' && skip=2   # the header, after 0.1.0's comment line if any
  [ -s "$new" ] || head -n "$skip" "$tmp/part.csv" > "$new"
  tail -n +$((skip + 1)) "$tmp/part.csv" >> "$tmp/rows"
}
has_mincap=0
"$BIN" mincap --help > /dev/null 2>&1 && has_mincap=1

for s in $SCRIPTS; do
  run_one run --workload "script:events=$s"
  run_one run --workload "script:events=$s" --cap-x "$CAPS"
  [ $has_mincap = 1 ] && run_one mincap --workload "script:events=$s"
done
for g in $GENERATORS; do
  if printf '%s\n' "$workloads" | grep -qx "${g%%:*}"; then
    run_one run --workload "$g"
    run_one run --workload "$g" --cap-x "$CAPS"
  else
    notes="$notes ${g%%:*}"
  fi
done
for g in $MULTI; do
  if printf '%s\n' "$workloads" | grep -qx "${g%%:*}"; then
    run_one run --workload "$g" --devices "$MULTI_DEVICES"
  else
    notes="$notes ${g%%:*}@$MULTI_DEVICES"
  fi
done
for t in $TRACES; do
  [ -f "$t" ] || { echo "regress: $t: missing" >&2; exit 2; }
  if run_one run --trace "$t"; then
    run_one run --trace "$t" --cap-x "$CAPS"
  else
    notes="$notes $(basename "$t")"
  fi
done
cat "$tmp/rows" >> "$new"
t1=$(date +%s)
nrows=$(wc -l < "$tmp/rows")
echo "regress: $nrows rows from $(echo $allocators | wc -w) allocators in $((t1 - t0)) s"
[ -z "$notes" ] || echo "regress: not in this build (skipped):$notes"
[ -z "$keep" ] || { mkdir -p "$keep"; cp "$new" "$keep/regress-new.csv"; }

if [ $refresh = 1 ]; then
  if [ -n "$only" ]; then echo "regress: --refresh writes the whole suite; drop --allocator" >&2; exit 2; fi
  cp "$new" "$baseline"
  echo "regress: baseline written: $baseline ($nrows rows); review 'git diff $baseline' and commit it"
  exit 0
fi

[ -f "$baseline" ] || { echo "regress: no baseline $baseline: run 'make baseline' and commit it" >&2; exit 2; }
oargs=""
for a in $only; do oargs="$oargs --allocator $a"; done
rc=0
"$BIN" compare "$baseline" "$new" --tolerance "$tolerance" --max-lines 80 $oargs || rc=$?
case $rc in
  0) echo "regress: ok (new rows pass; 'make baseline' adds them to the baseline)" ;;
  1) echo "regress: FAIL: if the change is intended, run 'make baseline' and commit results/baseline-sim.csv with the change that explains it" ;;
  *) echo "regress: the comparison could not run (exit $rc)" >&2 ;;
esac
exit $rc
