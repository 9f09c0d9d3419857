#!/bin/sh
# gpu_lanes.sh - run job lists side by side on one GPU within a memory budget (make bench's
# GPU phase). Each line of INPUTS is "LIST NEED": LIST a file of job lines, run one after
# another (`xargs -L 1 CMD... < LIST`), NEED the GPU memory its jobs hold at most, in
# bytes. Whenever one ends, the lists not started yet are tried in the order given, and
# each that fits beside those running (their NEEDs within BUDGET, fewer than LANES running)
# starts: a smaller list fills the room a larger one waits for. A list alone always runs.
#   sh scripts/gpu_lanes.sh BUDGET LANES INPUTS CMD...
set -eu
budget=${1:?usage: gpu_lanes.sh BUDGET LANES INPUTS CMD...}
lanes=${2:?usage: gpu_lanes.sh BUDGET LANES INPUTS CMD...}
inputs=${3:?usage: gpu_lanes.sh BUDGET LANES INPUTS CMD...}
shift 3
[ $# -gt 0 ] || { echo "gpu_lanes.sh: no command given" >&2; exit 2; }
pending=$(cat "$inputs")   # "LIST NEED" lines not started yet
running=""                 # "PID:NEED" words
while [ -n "$pending" ] || [ -n "$running" ]; do
  still=""; used=0; count=0
  for r in $running; do    # those still running, and what they hold
    pid=${r%%:*}
    if kill -0 "$pid" 2>/dev/null; then still="$still $r"; used=$((used + ${r#*:})); count=$((count + 1)); else wait "$pid" || true; fi
  done
  running=$still
  left=""
  nl='
'
  started=0
  while IFS=' ' read -r list need; do   # every list not started that fits now, in order
    [ -n "$list" ] || continue
    if [ "$count" -lt "$lanes" ] && { [ "$count" -eq 0 ] || [ $((used + need)) -le "$budget" ]; }; then
      xargs -L 1 "$@" < "$list" &
      running="$running $!:$need"
      used=$((used + need)); count=$((count + 1)); started=1
    else
      left="$left$list $need$nl"
    fi
  done <<EOT
$pending
EOT
  pending=$left
  [ "$started" = 1 ] || sleep 0.2
done
