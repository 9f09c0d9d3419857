# latency.gp - host time per alloc or free call, per strategy: the mean (ns/op), p50 and
# p99, each the median over the workloads run, with whiskers from the fastest to the
# slowest workload. Log scale when the values span more than 20x. Run by plots/plots.sh:
#   gnuplot -e "fmt='png'; out='O.png'; dat='D/latency.dat'; meta='D/latency.meta.gp'; dev='D/device.meta.gp'; gpdir='plots'" plots/latency.gp
# The meta file sets n, names[], colors[], ymin, ymax, nworkloads; the data file has one
# row per strategy: name, then median/min/max of mean ns/op, p50, p99.
load meta
load dev
w = 180 + n * 110
w = (w < 900) ? 900 : w
h = 560
load gpdir."/style.gp"
set datafile separator "\t"
set style data histograms
set style histogram errorbars gap 1.5 lw 1.2
set style fill solid 0.85 border rgb "#303030"
set boxwidth 1
set bars 0.4
set title sprintf("Host time per alloc/free call (median over %d workload%s; whiskers: fastest to slowest workload)\ndevice: %s", \
                  nworkloads, nworkloads == 1 ? "" : "s", device_name)
set ylabel "ns per call"
set key below center horizontal Left reverse samplen 1.5 width 2
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
plot dat using 2:3:4:xtic(1) lc rgb "#4c72b0" title "mean (ns/op)", \
     '' using 5:6:7 lc rgb "#55a868" title "p50", \
     '' using 8:9:10 lc rgb "#c44e52" title "p99"
