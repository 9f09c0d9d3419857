# capsweep.gp - one workload under a range of caps (x = cap / peak requested): the top
# panel says, per strategy, which caps completed (filled dot) and which ran out of
# memory (cross); the bottom panel gives peak reserved at each cap, with the cap itself
# dashed. Run by plots/plots.sh:
#   gnuplot -e "fmt='png'; out='O.png'; dat='D/capsweep-W.dat'; meta='D/capsweep-W.meta.gp'; dev='D/device.meta.gp'; gpdir='plots'" plots/capsweep.gp
# The meta file sets n, names[], colors[], unit, div, ymin, ymax, xmin, xmax, preq,
# workload, cap/caplo/caphi/captext (the limit the job ran under, bytes, 0 = none; drawn
# in both panels as a purple dash-dot line at cap / peak requested, with the interval
# inferred from the snapshot's OOM as a band); the data file holds two blocks per strategy: every cap (cap_x, peak_reserved
# in bytes, completed 1/0), then the caps that completed (cap_x, peak_reserved). Only
# completed runs are on the reserved lines: an OOM row's reserved is where it stopped.
load meta
load dev
maxlen = 12
do for [i=1:n] { maxlen = (strlen(names[i]) > maxlen) ? strlen(names[i]) : maxlen }
lside = maxlen * 7.5 + 30         # pixels for the strategy names on the left (tics)
rside = maxlen * 7.5 + 80        # and on the right (keys, with their samples)
w = 640 + lside + rside
strip = 24 * n + 30
lines = 420
h = 80 + strip + 50 + lines + 70
load gpdir."/style.gp"
set datafile separator "\t"
lm = lside / w
rm = 1.0 - rside / w
capx = (cap > 0 && preq > 0) ? 1.0 * cap / preq : 0
x0 = (capx > 0 && capx < xmin) ? capx : xmin
x1 = (capx > xmax) ? capx : xmax
pad = (x1 - x0) * 0.03 + 0.01
set xrange [x0 - pad : x1 + pad]
if (capx > 0) {
  blo = 1.0 * caplo / preq
  bhi = (1.0 * caphi / preq < x1 + pad) ? 1.0 * caphi / preq : x1 + pad
  if (caphi > caplo) { set object 50 rect from first blo, graph 0 to first bhi, graph 1 behind fc rgb "#7b3294" fs transparent solid 0.10 noborder }
  set arrow 50 from first capx, graph 0 to first capx, graph 1 nohead dt 4 lw 1.8 lc rgb "#7b3294" front
}
set multiplot title sprintf("Cap sweep on %s (device: %s)", workload, device_name)
set lmargin at screen lm
set rmargin at screen rm

# top: completed or not
set tmargin at screen 1.0 - 75.0 / h
set bmargin at screen 1.0 - (75.0 + strip) / h
set title "completed at this cap?" offset 0, -0.5
set yrange [n + 0.6 : 0.4]
set ytics 1 scale 0
do for [i=1:n] { set ytics add (names[i] i) }
set format x ""
set grid xtics noytics lc rgb "#e0e0e0"
set key at screen rm + 12.0 / w, screen 1.0 - 85.0 / h left top vertical Left reverse samplen 1 width 1
plot for [i=1:n] dat index (2 * i - 2) using 1:($3 == 1 ? i : NaN) with points pt 7 ps 1.1 lc colors[i] notitle, \
     for [i=1:n] dat index (2 * i - 2) using 1:($3 == 0 ? i : NaN) with points pt 2 ps 1.1 lw 2 lc colors[i] notitle, \
     NaN with points pt 7 ps 1.1 lc rgb "#404040" title "completed", \
     NaN with points pt 2 ps 1.1 lw 2 lc rgb "#404040" title "out of memory", \
     NaN with lines dt 4 lw 1.8 lc rgb "#7b3294" title (capx > 0 ? "job's limit" : "")

# bottom: peak reserved against the cap, runs that completed only. Strategies often coincide (same reserved at
# every cap): each gets its own marker shape, the earlier ones larger, so that a line
# drawn over another still lets it show.
ptype(i) = word("7 5 9 13 11 15 7 5 9 13 11 15", (i - 1) % 12 + 1) + 0
psize(i) = (1.6 - 0.15 * (i - 1) > 0.5) ? 1.6 - 0.15 * (i - 1) : 0.5
set tmargin at screen 1.0 - (75.0 + strip + 50) / h
set bmargin at screen 70.0 / h
unset title
ylo = ymin / div * 0.9
yhi = ymax / div * 1.05
set yrange [(ylo < yhi ? ylo : 0) : (yhi > 0 ? yhi : 1)]
set ytics autofreq
set format x "%.2gx"
set format y "%g"
set xlabel "cap / peak requested"
set ylabel sprintf("peak reserved (%s), runs that completed", unit)
set grid xtics ytics lc rgb "#e0e0e0"
set key at screen rm + 12.0 / w, screen 1.0 - (75.0 + strip + 50) / h left top vertical Left reverse samplen 2 width 1
if (capx > 0) { set label 50 captext at first capx, graph 1 left offset 0.5, -0.8 tc rgb "#7b3294" font ",9" front }
plot x * preq / div with lines dt 2 lw 1.2 lc rgb "#606060" title "the cap", \
     for [i=1:n] dat index (2 * i - 1) using 1:($2 / div) with linespoints pt ptype(i) ps psize(i) lw 1.5 lc colors[i] title names[i]
unset multiplot
