#!/bin/sh
# gpu_lanes.sh - run job lists side by side on one GPU within a memory budget (make bench's
# GPU phase). Each line of INPUTS is "LIST NEED": LIST a file of job lines, run one after
# another (`xargs -L 1 CMD... < LIST`), NEED the GPU memory its jobs hold at most, in
# bytes. The lists start in the order given, each as soon as its NEED and those of the
# lists running fit in BUDGET bytes and fewer than LANES run; a list alone always runs.
#   sh scripts/gpu_lanes.sh BUDGET LANES INPUTS CMD...
set -eu
budget=${1:?usage: gpu_lanes.sh BUDGET LANES INPUTS CMD...}
lanes=${2:?usage: gpu_lanes.sh BUDGET LANES INPUTS CMD...}
inputs=${3:?usage: gpu_lanes.sh BUDGET LANES INPUTS CMD...}
shift 3
[ $# -gt 0 ] || { echo "gpu_lanes.sh: no command given" >&2; exit 2; }
running=""
while read -r list need; do
  while [ -n "$running" ]; do   # wait until this list fits beside those running
    still=""; used=0; count=0
    for r in $running; do
      pid=${r%%:*}
      if kill -0 "$pid" 2>/dev/null; then still="$still $r"; used=$((used + ${r#*:})); count=$((count + 1)); else wait "$pid" || true; fi
    done
    running=$still
    [ -z "$running" ] && break
    [ $((used + need)) -le "$budget" ] && [ "$count" -lt "$lanes" ] && break
    sleep 0.2
  done
  xargs -L 1 "$@" < "$list" &
  running="$running $!:$need"
done < "$inputs"
for r in $running; do wait "${r%%:*}" || true; done
