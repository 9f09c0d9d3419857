#!/bin/sh
# run.sh - `make fuzz`: one libFuzzer target per trace reader (pytorch snapshot, RMM log,
# native CSV), built with clang -fsanitize=fuzzer,address,undefined and run for
# FUZZ_SECONDS each (default 60), seeded from tests/data, tests/variants and tests/bad.
# Each target has a structure-aware mutator (fuzz_mutate.h: slices repeated to grow
# inputs past 32 KiB, bounded values written in, gzip'd inputs mutated inside and
# recompressed) and inputs up to 128 KiB (a gzip'd input's inflated bytes too), so the
# bounds (memo, streams, lines, gzip trailer) are reached; inputs that run fast are picked
# more often (-entropic_scale_per_exec_time=1). A nightly run: FUZZ_SECONDS=1800
# FUZZ_RUNS=10000000 make fuzz. Measured 2026-11-27 with FUZZ_SECONDS=60 make fuzz, one
# process per target on a 2-core host shared with other work: pytorch 806,120 executions
# (13,200 a second, on a corpus grown over earlier runs; 1,700 a second before, on the same
# kind of corpus), rmm 1,234,148 (20,200 a second), native 8,729,167 (143,000 a second),
# 0 crashes. The rate falls as a corpus grows: FUZZ_TARGETS=pytorch FUZZ_SECONDS=1200
# FUZZ_RUNS=10000000 make fuzz ran 9,118,586 in 1,201 s (7,600 a second; 11,900 at first,
# 7,800 at the end), so 10 M take about 23 minutes for pytorch, less for rmm and native;
# see README "Reliability: bounds".
#
#   FUZZ_SECONDS=300 make fuzz         longer runs
#   FUZZ_TARGETS="rmm native" make fuzz  some of them
#   FUZZ_CC=clang-15 make fuzz          another clang
#   FUZZ_MAX_LEN=1048576 make fuzz      longer inputs (default 128 KiB; seeds are cut at it)
#   FUZZ_RUNS=10000000 make fuzz        stop each target after this many executions (or FUZZ_SECONDS)
#   FUZZ_JOBS=8 make fuzz               8 fuzzing processes per target (-fork=8)
#
# Work and findings go to build/fuzz/: corpus-<target>/ (grows across runs) and
# crash-<target>-* (inputs that crashed, leaked or timed out). Each crasher, once fixed,
# belongs in tests/bad/ as fuzz_<target>_<n>.<ext> with the message it now gives in
# fuzz_<target>_<n>.expect. Exit status: 0 when no target found anything.
set -u
cd "$(dirname "$0")/../.." || exit 2
CC=${FUZZ_CC:-clang}
SECS=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-pytorch rmm native}
MAXLEN=${FUZZ_MAX_LEN:-131072}
SEEDLEN=${FUZZ_SEED_LEN:-16384}
RUNS=${FUZZ_RUNS:--1}
JOBS=${FUZZ_JOBS:-0}   # > 0: libFuzzer's -fork=N, N processes on one corpus (a nightly host's cores)
OUT=build/fuzz
mkdir -p "$OUT"

if ! command -v "$CC" >/dev/null 2>&1; then
  echo "fuzz: $CC not found. Install clang (Debian/Ubuntu: apt-get install -y clang) or set FUZZ_CC." >&2
  exit 2
fi
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' > "$OUT/probe.c"
if ! "$CC" -fsanitize=fuzzer,address,undefined "$OUT/probe.c" -o "$OUT/probe" 2>"$OUT/probe.log"; then
  v=$("$CC" --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  echo "fuzz: $CC cannot link libFuzzer (see $OUT/probe.log). Install the clang runtime:" >&2
  echo "      Debian/Ubuntu: apt-get install -y libclang-rt-${v:-N}-dev   (or llvm-${v:-N}-dev on older releases)" >&2
  exit 2
fi

# a 64 KiB window and 4 KiB reads: the readers slide their window often, and an input
# costs little to open; the bounds smaller, so that inputs reach them in microseconds
# (the same code paths: PK_MEMO_MAX 1 M -> 4096, PK_STACK_MAX 128 K -> 4096, streams 1024 -> 64)
CFLAGS="-g -O1 -std=c11 -D_GNU_SOURCE -DTRACE_SRC_BUF=65536 -DTRACE_SRC_IN_BUF=4096 -DPK_MEMO_MAX=4096 -DPK_STACK_MAX=4096 -DTRACE_STREAMS_MAX=64 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Iharness/common -Iharness/engine -Iworkloads"
COMMON="workloads/trace_src.c"
sources() {
  case $1 in
    pytorch) echo "$COMMON workloads/pickle_reader.c workloads/pickle_memo.c workloads/pickle_frames.c workloads/pickle_schema.c workloads/pickle_vocab.c workloads/oom_evidence.c workloads/trace_pools.c workloads/trace_survey.c workloads/trace_pytorch.c" ;;
    rmm) echo "$COMMON workloads/trace_rmm.c" ;;
    native) echo "$COMMON workloads/trace_native.c" ;;
  esac
}
seeds() {   # seed files for a target: its formats from the test data, the variants and the corpus
  case $1 in
    pytorch) ls tests/data/*.pickle tests/data/*.pickle.gz tests/variants/*.pickle tests/variants/*.pickle.gz tests/bad/*.pickle tests/bad/*.pickle.gz \
               tests/pools/*.pickle tests/data/recorded/pools/*.pickle.gz 2>/dev/null ;;
    rmm) ls tests/data/*.rmm.csv tests/bad/rmm_*.csv tests/bad/rmm_*.gz tests/bad/fuzz_rmm_* 2>/dev/null | grep -v '\.expect$' ;;
    native) ls tests/bad/native_*.csv tests/bad/fuzz_native_* 2>/dev/null | grep -v '\.expect$' ;;
  esac
}

status=0
summary=""
for t in $TARGETS; do
  bin="$OUT/fuzz_$t"
  # shellcheck disable=SC2046
  if ! "$CC" $CFLAGS "tests/fuzz/fuzz_$t.c" $(sources "$t") -lz -o "$bin" 2>"$OUT/build-$t.log"; then
    echo "fuzz: building $bin failed, see $OUT/build-$t.log" >&2
    cat "$OUT/build-$t.log" >&2
    exit 2
  fi
  corpus="$OUT/corpus-$t"
  mkdir -p "$corpus"
  for f in $(seeds "$t"); do
    base=$(basename "$f")
    # seeds from tests/data and tests/variants are cut at SEEDLEN (16 KiB: the corpus starts
    # small and fast; the mutator grows what finds new paths); tests/bad inputs, built to
    # reach a bound, stay whole up to MAXLEN
    case $f in tests/bad/*) cut=$MAXLEN ;; *) cut=$SEEDLEN ;; esac
    case $f in
      # a large .gz seed is its first bytes inflated and compressed again (a valid trailer,
      # and an input that inflates to little: a cut real snapshot inflates to MBs); the
      # pickle target also gets them inflated
      *.gz)
        if [ "$(wc -c < "$f")" -le $((MAXLEN / 4)) ]; then cp "$f" "$corpus/$base"
        else gzip -dc "$f" 2>/dev/null | head -c "$cut" | gzip -1 > "$corpus/$base"; fi
        case $f in *.pickle.gz) gzip -dc "$f" 2>/dev/null | head -c "$cut" > "$corpus/${base%.gz}.raw" ;; esac ;;
      *) head -c "$cut" "$f" > "$corpus/$base" ;;
    esac
  done
  native_seed="$corpus/seed.native.csv"
  if [ "$t" = native ] && [ ! -s "$native_seed" ]; then
    printf '# fragbench-trace v1\nop,id,size,stream,device\nalloc,1,512,0,0\nalloc,0x20,4096,7,1\niter,,,,0\nfree,1,,,0\nempty_cache,,,,0\nalloc,2,4096,7,0,3\npool_release,,,,0,3\nempty_cache,,,,0,3\n' > "$native_seed"
  fi
  log="$OUT/fuzz-$t.log"
  echo "fuzz: $t for ${SECS}s (corpus $corpus, log $log)"
  fork=""
  [ "$JOBS" -gt 0 ] && fork="-fork=$JOBS -ignore_crashes=1"
  # -entropic_scale_per_exec_time=1: inputs that run fast are picked more often (up to 30x).
  # Without it a grown corpus spends its time on its slowest inputs: gzip'd ones of a few KiB
  # that inflate to 128 KiB, read three or four times each (94% of the pytorch corpus's
  # time); with it the same corpus runs 3 times as many inputs a second, at the same coverage
  # shellcheck disable=SC2086
  "$bin" "$corpus" $fork -max_total_time="$SECS" -runs="$RUNS" -max_len="$MAXLEN" -timeout=20 -rss_limit_mb=2048 \
    -entropic_scale_per_exec_time=1 -print_final_stats=1 -artifact_prefix="$OUT/crash-$t-" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\): cov.*/\1/p' "$log" | tail -1)   # -fork: the last progress line
  crashes=$(ls "$OUT"/crash-"$t"-* 2>/dev/null | wc -l)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  line="$t: ${execs:-?} executions in ${secs:-$SECS}s, exit $rc, $crashes crash file(s)"
  echo "  $line"
  summary="$summary$line
"
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    status=1
    grep -m3 -E 'ERROR|SUMMARY|runtime error' "$log" | sed 's/^/    /'
  fi
done
printf '%s' "$summary" > "$OUT/summary.txt"
echo "fuzz summary (also in $OUT/summary.txt):"
printf '%s' "$summary" | sed 's/^/  /'
exit $status
