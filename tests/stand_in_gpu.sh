#!/bin/sh
# stand_in_gpu.sh - fragbench as make bench sees it on a GPU host, on a machine without
# one: `device` answers a cuda device of an H100 80GB's size, and every other command runs
# with each "cuda" argument (--device cuda, --confirm-on cuda) turned into "sim". The
# bench's GPU path (the uncapped rows in one process, the confirmations and async's jobs
# in batches, the merges) then runs end to end; its figures are sim's. test_bench.c.
#   STAND_IN_FOR=build/fragbench sh tests/stand_in_gpu.sh COMMAND [ARGS...]
FB=${STAND_IN_FOR:?STAND_IN_FOR names the fragbench binary}
if [ "${1:-}" = device ]; then
  printf 'kind: cuda\nname: stand-in GPU (sim)\ntotal: 85017493504\nfree: 84465090560\n'
  exit 0
fi
n=$#
while [ "$n" -gt 0 ]; do   # rotate the arguments once, each "cuda" as "sim"
  a=$1; shift
  [ "$a" = cuda ] && a=sim
  set -- "$@" "$a"
  n=$((n - 1))
done
exec "$FB" "$@"
