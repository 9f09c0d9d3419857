# latency.gp - host time per alloc or free call, per strategy: p50 and p99 of calls timed
# alone, and the mean (ns/op) where the run measured nothing else in its loop, each the
# median over the strategy's workloads (its count under its name), with whiskers from the
# fastest to the slowest workload. Log scale when the values span more than 20x. Run by
# plots/plots.sh:
#   gnuplot -e "fmt='png'; out='O.png'; dat='D/latency.dat'; meta='D/latency.meta.gp'; dev='D/device.meta.gp'; gpdir='plots'" plots/latency.gp
# The meta file sets n, names[], colors[], ymin, ymax, nwlo/nwhi (fewest and most
# workloads of a strategy), hasmean (any mean to draw), somemean (some strategies have
# none); the data file has one row per strategy: name, median/min/max of mean ns/op ("-"
# when its runs' loop also did other work: ns_per_op_includes), p50, p99, workloads.
load meta
load dev
w = 180 + n * 110
w = (w < 900) ? 900 : w
h = 580
load gpdir."/style.gp"
set datafile separator "\t"
set datafile missing "-"
set style data histograms
set style histogram errorbars gap 1.5 lw 1.2
set style fill solid 0.85 border rgb "#303030"
set boxwidth 1
set bars 0.4
over = (nwlo == nwhi) ? sprintf("median over %d workload%s", nwhi, nwhi == 1 ? "" : "s") : "median over each strategy's workloads (count under its name)"
meannote = hasmean ? (somemean ? "; no mean where the run's loop also wrote its timeline (ns_per_op_includes)" : "") : \
           "\nno mean: these runs' loop also wrote the timeline (ns_per_op_includes), which the loop's mean would include"
set title sprintf("Host time per alloc/free call (%s; whiskers: fastest to slowest workload)%s\ndevice: %s", over, meannote, device_name)
set ylabel "ns per call"
set key at screen 0.5, screen 0.03 center bottom horizontal Left reverse samplen 1.5 width 2
set bmargin 6
set xtics scale 0
maxlen = 0
do for [i=1:n] { maxlen = (strlen(names[i]) > maxlen) ? strlen(names[i]) : maxlen }
if (maxlen * 8 > (w - 180) / n) { set xtics rotate by 25 right }
if (ymax / ymin > 20) {
  set logscale y
  set yrange [ymin * 0.5 : ymax * 2]
  set format y "%g"
  @logy125
} else {
  set yrange [0 : ymax * 1.15]
}
xl(name, k) = (nwlo == nwhi) ? name : sprintf("%s\n(%d)", name, k)
if (hasmean) {
  plot dat using 2:3:4:xtic(xl(strcol(1), column(11))) lc rgb "#4c72b0" title "mean (ns/op, the loop's clock)", \
       '' using 5:6:7 lc rgb "#55a868" title "p50 (calls timed alone)", \
       '' using 8:9:10 lc rgb "#c44e52" title "p99 (calls timed alone)"
} else {
  plot dat using 5:6:7:xtic(xl(strcol(1), column(11))) lc rgb "#55a868" title "p50 (calls timed alone)", \
       '' using 8:9:10 lc rgb "#c44e52" title "p99 (calls timed alone)"
}
