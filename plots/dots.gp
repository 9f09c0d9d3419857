# dots.gp - one question per plot, one row per workload: a dot per strategy at its value
# (x), the dashed 1.0 line (1.0 = the workload's peak requested, the lower bound). Each
# strategy keeps its colour and has its own marker, a little above or below the row's
# middle, so that strategies at the same value stay visible; references (raw, oracle)
# are hollow. Draws overhead (peak reserved / peak requested) and mincap (smallest cap
# that completes / peak requested). Run by plots/plots.sh:
#   gnuplot -e "fmt='png'; out='O.png'; dat='D/NAME.dat'; meta='D/NAME.meta.gp'; dev='D/device.meta.gp'; gpdir='plots'" plots/dots.gp
# NAME.meta.gp (written by `fragbench report`) sets n, names[], colors[], isref[],
# nrows, xmin, xmax, label_chars, nfail, xlab, ptitle. The data's index 1 lists the cells
# whose run failed (row, strategy): drawn as a cross in a column of their own at the
# right, "out of memory", so that a strategy that died is seen, not dropped; index 2 the
# job's limit of a capped workload (row, cap / peak requested; nlimit of them): a purple
# dash-dot tick across its row, the most any strategy could have held there.
load meta
load dev
rowpx = (n > 6) ? 34 : 28
w = 1200
h = 150 + nrows * rowpx
h = (h < 420) ? 420 : h
load gpdir."/style.gp"
set datafile separator "\t"
set datafile missing "-"
set title ptitle."\ndevice: ".device_name
set xlabel xlab
lm = label_chars * 7.2 + 30
set lmargin at screen lm / w
set rmargin at screen 1.0 - 230.0 / w
set tmargin at screen 1.0 - 70.0 / h
set bmargin at screen 60.0 / h
set yrange [nrows + 0.5 : 0.5]
set ytics scale 0
set grid noytics xtics lc rgb "#d8d8d8"
# the x range: from just below the smallest value (or 1) to just above the largest
lo = (xmin < 1 ? xmin : 1)
hi = xmax
pad = (hi - lo) * 0.04 + 0.005
failx = hi + pad + (hi - lo + pad) * 0.10   # the failed column, right of the values
set xrange [lo - pad : (nfail > 0 ? failx + (hi - lo + pad) * 0.06 : hi + pad)]
set format x "%.2g"
if (hi - lo < 0.3) { set format x "%.3f" }
# alternate row bands, for the eye
do for [r=1:nrows:2] { set object r rect from graph 0, first r - 0.5 to graph 1, first r + 0.5 behind fc rgb "#f3f3f3" fs solid noborder }
set arrow 1 from first 1, graph 0 to first 1, graph 1 nohead lc rgb "black" lw 1.2 dt 2 back
if (nfail > 0) {
  # tics on the values only, none over the failed column
  span = hi - lo + 2 * pad
  e10 = 10.0 ** floor(log10(span / 5.0))
  step = (span / e10 >= 25 ? 5 * e10 : (span / e10 >= 10 ? 2 * e10 : e10))
  xt0 = ceil((lo - pad) / step) * step
  xt1 = hi + pad
  set xtics xt0, step, xt1
  sep = hi + pad + (hi - lo + pad) * 0.04
  set arrow 2 from first sep, graph 0 to first sep, graph 1 nohead lc rgb "#909090" lw 1 back
  set label 2 "out of\nmemory" at first failx, graph 1 center offset 0, 1.2 tc rgb "#c00000" font ",10"
}
set key at screen 1.0 - 220.0 / w, screen 1.0 - 80.0 / h left top vertical Left reverse samplen 1 width 1 spacing 1.3
off(i) = (i - (n + 1) / 2.0) * (0.62 / (n > 1 ? n - 1 : 1))
ptype(i) = isref[i] ? word("6 4 8 12 10 14", (i - 1) % 6 + 1) + 0 : word("7 5 9 13 11 15", (i - 1) % 6 + 1) + 0
plot dat index 0 using (NaN):($0 + 1):ytic(1) notitle, \
     dat index 2 using 2:($1 - 0.45):(0):(0.9) with vectors nohead lw 2.5 dt 4 lc rgb "#7b3294" notitle, \
     for [i=1:n] dat index 0 using (column(i+1)):($0 + 1 + off(i)) with points pt ptype(i) ps 1.5 lw 1.5 lc colors[i] title names[i].(isref[i] ? " (reference)" : ""), \
     for [i=1:n] dat index 1 using (failx):($2 == i ? $1 + off(i) : NaN) with points pt 2 ps 1.6 lw 2.5 lc colors[i] notitle, \
     NaN with lines lc rgb "black" lw 1.2 dt 2 title "1.0 = peak requested", \
     (nlimit > 0 ? NaN : 1/0) with lines lw 2.5 dt 4 lc rgb "#7b3294" title (nlimit > 0 ? "the job's limit" : ""), \
     (nfail > 0 ? NaN : 1/0) with points pt 2 ps 1.6 lw 2.5 lc rgb "#404040" title (nfail > 0 ? "ran out of memory" : "")
