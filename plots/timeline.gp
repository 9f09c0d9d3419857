# timeline.gp - one workload's memory over the run: one panel per strategy, each with the
# bytes the workload had requested (black), the bytes in blocks handed out (blue) and
# the bytes reserved from the device (red, shaded), on shared axes so panels compare at
# a glance. Run by plots/plots.sh:
#   gnuplot -e "fmt='png'; out='O.png'; dat='D/timeline-W.dat'; meta='D/timeline-W.meta.gp'; dev='D/device.meta.gp'; gpdir='plots'" plots/timeline.gp
# The meta file sets n, names[], colors[], unit, div, ymax, xmax, workload; the data file
# holds one block per strategy: event, requested, allocated, reserved (bytes).
load meta
load dev
cols = (n <= 1) ? 1 : ((n <= 4) ? 2 : 3)
rows = int((n + cols - 1) / cols)
w = (cols == 1) ? 900 : 460 * cols + 60
h = 250 * rows + 150
load gpdir."/style.gp"
set datafile separator "\t"
set format x "%.0s%c"
set xrange [0 : (xmax > 0 ? xmax : 1)]
set yrange [0 : (ymax > 0 ? ymax / div * 1.08 : 1)]
set ytics nomirror
set grid xtics ytics lc rgb "#e0e0e0"
set style fill transparent solid 0.18 noborder
# room on top for the title and the shared key
top = 1.0 - 115.0 / h
bottom = 62.0 / h
set multiplot layout rows, cols \
    title sprintf("%s: memory over the run, per strategy (device: %s)", workload, device_name) \
    margins 0.07, 0.98, bottom, top spacing 0.06, 75.0 / h
do for [i=1:n] {
  set title names[i] offset 0, -0.4
  set ylabel (i % cols == 1 || cols == 1) ? unit : ""
  set xlabel (i > n - cols) ? "event" : ""
  if (i == 1) {
    set key at screen 0.5, screen (1.0 - 62.0 / h) center center horizontal maxrows 1 Left reverse samplen 2 width 3
  } else {
    unset key
  }
  plot dat index (i - 1) using 1:($4 / div) with filledcurves y1=0 lc rgb "#d62728" title "reserved (shaded)", \
       '' index (i - 1) using 1:($4 / div) with lines lc rgb "#d62728" lw 1.5 notitle, \
       '' index (i - 1) using 1:($3 / div) with lines lc rgb "#1f77b4" lw 1.5 title "allocated", \
       '' index (i - 1) using 1:($2 / div) with lines lc rgb "black" lw 1.2 title "requested"
}
unset multiplot
