#!/bin/sh
# host_spells.sh [BIN] [N] - whether a slow spell of percall is the core's speed or its
# memory's: N times in turn (default 10), tests/probes/spin.c's loop (no memory traffic),
# then caching's warm ns per call on resnet_varsize (BIN percall, 5 passes), with the
# guest's steal time (/proc/stat) read around each. One line each.
BIN=${1:-build/fragbench}
N=${2:-10}
cc -O2 -o /tmp/fb_spin "$(dirname "$0")/spin.c" || exit 1
steal() { awk '/^cpu /{print $9}' /proc/stat; }
for i in $(seq 1 "$N"); do
  s0=$(steal)
  sp=$(/tmp/fb_spin)
  r=$("$BIN" percall --trace tests/data/resnet_varsize.pickle.gz --allocator caching --device sim --passes 5 2>/dev/null | tail -n 1 | awk '{print $4, $5}')
  s1=$(steal)
  echo "run $i: $sp; resnet_varsize caching fresh/warm ns $r; steal ticks $((s1 - s0))"
done
