# bars.gp - grouped bars: one cluster per workload, one bar per strategy, the dashed 1.0
# line (1.0 = the workload's peak requested, the lower bound), the value over each bar.
# Draws overhead (peak reserved / peak requested) and mincap (smallest cap that completes
# / peak requested). Run by plots/plots.sh:
#   gnuplot -e "fmt='png'; out='O.png'; dat='D/NAME.dat'; meta='D/NAME.meta.gp'; dev='D/device.meta.gp'; gpdir='plots'" plots/bars.gp
# NAME.meta.gp (from plots/prep.awk) sets n, names[], colors[], nclusters, ymin, ymax,
# label_chars, ylab, ptitle.
load meta
load dev
barpx = 16
w = 180 + nclusters * (n * barpx + 36)
w = (w < 960) ? 960 : (w > 4000 ? 4000 : w)
h = 600
load gpdir."/style.gp"
set datafile separator "\t"
set datafile missing "-"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border rgb "#303030"
set boxwidth 1
set title ptitle."\ndevice: ".device_name
set ylabel ylab
set key below center horizontal Left reverse samplen 2.5 width 1
set xtics scale 0
if (label_chars * 8 > (w - 180) * 0.8) { set xtics rotate by 25 right }
# log when the bars span more than 20x, else linear from 0
uselog = (ymax / ymin > 20)
if (uselog) {
  set logscale y
  @logy125
  set yrange [(ymin < 1 ? ymin : 1) * 0.8 : ymax * 2.5]
} else {
  set yrange [0 : (ymax > 1 ? ymax : 1) * 1.15]
}
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lc rgb "black" lw 1.5 dt 2 front
# bar i of cluster c sits at c + (i - 1 - (n - 1) / 2.0) / (n + gap)
xbar(c, i) = c + (i - 1 - (n - 1) / 2.0) / (n + 1.0)
plot for [i=1:n] dat using (column(i+1)):xtic(1) title names[i] lc colors[i], \
     for [i=1:n] dat using (xbar($0, i)):(column(i+1)):(sprintf(column(i+1) < 10 ? "%.2f" : "%.1f", column(i+1))) \
         with labels rotate by 90 left offset 0, 0.3 font ",8" tc rgb "#303030" notitle, \
     NaN with lines lc rgb "black" lw 1.5 dt 2 title "1.0 = peak requested"
