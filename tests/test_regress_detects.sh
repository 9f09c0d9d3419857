#!/bin/sh
# test_regress_detects.sh - shows that the regression check (tests/regress.sh, `make
# regress`) catches a changed caching rule. In a copy of the tree: the unchanged build
# passes regress against the committed baseline; then PyTorch's kLargeBuffer (the 20 MiB
# segment for 1..10 MiB requests, CACHING_LARGE_BUFFER in allocators/caching*) becomes
# 16 MiB (not larger: the max_non_split_rounding_mb default of 20 must stay >= it), and
# regress must fail on a memory figure of a caching row. Only the caching
# rows are run and compared (--allocator caching), to stay well under a minute.
# Exit 0 = caught, 1 = not caught or could not run, 77 = nothing to test (no baseline).
# Run by tests/test_regress.c (make test); FB_KEEP_TMP=1 keeps the copy.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f results/baseline-sim.csv ] || { echo "skip: no results/baseline-sim.csv (make baseline)"; exit 77; }
ls allocators/caching* > /dev/null 2>&1 || { echo "skip: no allocators/caching*"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fbdetect.XXXXXX")
[ -n "${FB_KEEP_TMP:-}" ] || trap 'rm -rf "$tmp"' EXIT INT TERM
# the sources, the suite and its baseline; the objects already built come along with
# their times, so that only what the change touches recompiles
for p in Makefile harness allocators workloads tests plots results/baseline-sim.csv results/tolerance.csv; do
  mkdir -p "$tmp/$(dirname "$p")"
  cp -pR "$p" "$tmp/$p"
done
if [ -d build/obj ]; then
  mkdir -p "$tmp/build"
  cp -pR build/obj "$tmp/build/obj"
  [ -f build/fragbench ] && cp -p build/fragbench "$tmp/build/fragbench"
fi
cd "$tmp"

# the make that runs this test (make test, make SAN=1 test) must not leak its variables
# or its jobserver into the copy's plain build
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
build() {
  make -j2 SAN= TSAN= MPI= ${CUDA:+CUDA=$CUDA} build/fragbench > "$tmp/build.log" 2>&1 || { echo "FAIL: build in the copy ($1):"; tail -n 20 "$tmp/build.log"; exit 1; }
}

build unchanged
rc=0
sh tests/regress.sh build/fragbench --allocator caching > "$tmp/before.log" 2>&1 || rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: the unchanged tree does not pass its own regress (exit $rc): the baseline is stale"
  echo "(run 'make baseline' and commit results/baseline-sim.csv) or the suite cannot run:"
  tail -n 30 "$tmp/before.log"
  exit 1
fi

# the change: kLargeBuffer 20 MiB -> 16 MiB
files=$(grep -l 'CACHING_LARGE_BUFFER[[:space:]]*(20ull << 20)' allocators/caching* || true)
[ -n "$files" ] || { echo "FAIL: '#define CACHING_LARGE_BUFFER (20ull << 20)' not found in allocators/caching*: update this test"; exit 1; }
for f in $files; do
  sed -i 's/\(CACHING_LARGE_BUFFER[[:space:]]*\)(20ull << 20)/\1(16ull << 20)/' "$f"
done
grep -q 'CACHING_LARGE_BUFFER[[:space:]]*(16ull << 20)' $files || { echo "FAIL: the edit did not apply"; exit 1; }
build changed

rc=0
sh tests/regress.sh build/fragbench --allocator caching > "$tmp/after.log" 2>&1 || rc=$?
if [ $rc -ne 1 ]; then
  echo "FAIL: regress exited $rc with kLargeBuffer = 16 MiB; expected 1 (a memory regression):"
  tail -n 30 "$tmp/after.log"
  exit 1
fi
if ! grep -q ' caching .*peak_reserved ' "$tmp/after.log"; then
  echo "FAIL: regress failed, but not on a caching row's peak_reserved:"
  tail -n 30 "$tmp/after.log"
  exit 1
fi
echo "ok: regress caught kLargeBuffer 20 -> 16 MiB:"
grep -E '^row |peak_reserved|^regress: FAIL' "$tmp/after.log" | head -n 8
