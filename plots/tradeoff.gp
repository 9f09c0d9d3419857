# tradeoff.gp - no strategy is free: overhead (peak reserved / peak requested, y) against
# time in device calls per 1000 alloc/free calls (x, log scale), one point per strategy
# per workload: the colour is the strategy, the shape the workload (two workloads of one
# strategy never look alike). Lower-left is better. Run by plots/plots.sh:
#   gnuplot -e "fmt='png'; out='O.png'; dat='D/tradeoff.dat'; meta='D/tradeoff.meta.gp'; dev='D/device.meta.gp'; gpdir='plots'" plots/tradeoff.gp
# The meta file sets n, names[], colors[], isref[], nw, wnames[], xmin, xmax, ymin, ymax,
# nodriver (the strategies left out: no driver time, which a log axis cannot place); the
# data file holds one block per strategy: driver ns per 1000 calls, overhead, workload,
# workload index.
load meta
load dev
w = 1200
h = 700
load gpdir."/style.gp"
set datafile separator "\t"
set title "Memory against driver time: each point is one strategy (colour) on one workload (shape); lower-left is better\ndevice: ".device_name
set xlabel "time in device calls per 1000 alloc/free calls (log scale; modeled on sim, measured on a GPU)"
set ylabel "peak reserved / peak requested"
set logscale x
set xrange [xmin / 2 : xmax * 2]
# x tics in time units
set xtics ("1 µs" 1e3, "10 µs" 1e4, "100 µs" 1e5, "1 ms" 1e6, "10 ms" 1e7, "100 ms" 1e8, "1 s" 1e9, "100 ns" 100, "10 ns" 10)
set mxtics 10
lo = (ymin < 1 ? ymin : 1)
set yrange [lo - (ymax - lo) * 0.05 - 0.005 : ymax + (ymax - lo) * 0.08 + 0.01]
set grid xtics ytics lc rgb "#d8d8d8"
set rmargin at screen 1.0 - 260.0 / w
set key at screen 1.0 - 250.0 / w, graph 1 left top vertical Left reverse samplen 1 width 1 spacing 1.2
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lc rgb "black" lw 1.2 dt 2 back
if (strlen(nodriver) > 0) { set label 1 "no driver time, not drawn: ".nodriver at screen 1.0 - 250.0 / w, screen 0.05 left font ",9" }
wtype(j) = word("7 5 9 13 11 15 1 2 3 4 6 8", (j - 1) % 12 + 1) + 0
plot for [i=1:n] for [j=1:nw] dat index (i - 1) using 1:($4 == j ? $2 : NaN) with points pt wtype(j) ps 1.6 lw 1.5 lc colors[i] notitle, \
     for [i=1:n] NaN with lines lw 7 lc colors[i] title names[i].(isref[i] ? " (reference)" : ""), \
     NaN with lines lc rgb "white" title " ", \
     for [j=1:nw] NaN with points pt wtype(j) ps 1.4 lw 1.5 lc rgb "#303030" title wnames[j], \
     NaN with lines lc rgb "black" lw 1.2 dt 2 title "1.0 = peak requested"
