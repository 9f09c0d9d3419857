#!/bin/sh
# driver_cost.sh - what stitch's memory costs in driver time, against expandable segments:
# each input replayed with both on sim (modeled driver time, the per-call cost table) and,
# on a GPU host, on cuda (driver time measured: a checked pass with --validate --verify
# for the memory figures, then an unchecked pass for the time). One line per input:
# peak reserved of each (cuda = sim?), driver ms of each, stitch/expandable.
# Usage: sh scripts/driver_cost.sh BIN OUTDIR INPUT...   (INPUT: a trace file, or
#        workload:NAME[:k=v,...]); DEVICES="sim" skips the GPU; STITCH=stitch:handle_max=16MiB
#        (or stitch:handle_max=20MiB,grow_whole=1) compares stitch with those parameters.
set -u
[ $# -ge 3 ] || { echo "usage: sh scripts/driver_cost.sh BIN OUTDIR INPUT..." >&2; exit 2; }
BIN=$1 OUT=$2
shift 2
DEVICES=${DEVICES:-sim cuda}
STITCH=${STITCH:-stitch}
mkdir -p "$OUT"
status=0
printf '%-28s %-6s %15s %15s %6s %10s %10s %7s\n' input device exp_reserved stitch_reserved =sim exp_ms stitch_ms ratio
for input in "$@"; do
  case $input in workload:*) src="--workload ${input#workload:}" ;; *) src="--trace $input" ;; esac
  name=$(basename "$input" | tr ':=,/' '____')
  for dev in $DEVICES; do
    csv=$OUT/$name-$dev.csv
    if [ "$dev" = cuda ]; then
      "$BIN" run $src --allocator expandable --allocator "$STITCH" --device cuda --validate --verify --quiet \
        --out "$OUT/$name-cuda-checked.csv" || { echo "$input: checked cuda run failed"; status=1; continue; }
    fi
    "$BIN" run $src --allocator expandable --allocator "$STITCH" --device "$dev" --quiet --out "$csv" ||
      { echo "$input: $dev run failed"; status=1; continue; }
    # the params column is quoted when it holds commas (stitch:handle_max=20MiB,grow_whole=1):
    # flattened copies keep the columns read below in place
    for f in "$csv" "$OUT/$name-cuda-checked.csv"; do [ -f "$f" ] && sed 's/"[^"]*"/-/g' "$f" > "$f.flat"; done
    awk -F, -v input="$input" -v dev="$dev" -v checked="$OUT/$name-cuda-checked.csv.flat" -v sim="$OUT/$name-sim.csv.flat" '
      BEGIN { while ((getline l < sim) > 0) { split(l, f, ","); if (f[1] ~ /^[0-9]+$/) simres[f[5]] = f[22] }
              while ((getline l < checked) > 0) { split(l, f, ","); if (f[1] ~ /^[0-9]+$/) chk[f[5]] = f[22] } }
      $1 ~ /^[0-9]+$/ { res[$5] = (dev == "cuda" && ($5 in chk)) ? chk[$5] : $22; ms[$5] = $33 / 1e6 }
      END { same = (res["expandable"] == simres["expandable"] && res["stitch"] == simres["stitch"]) ? "yes" : "NO"
            printf "%-28.28s %-6s %15s %15s %6s %10.1f %10.1f %7.2f\n", input, dev, res["expandable"], res["stitch"],
                   same, ms["expandable"], ms["stitch"], ms["expandable"] ? ms["stitch"] / ms["expandable"] : 0 }' "$csv.flat"
  done
done | tee "$OUT/driver_cost.txt"
exit $status
