# fit.gp - what fits: peak reserved (uncapped runs) against the varied parameter, one
# line per strategy, the limit drawn solid and limit - margin (what fit's runs were
# allowed) dashed; each strategy's answer (the largest value that fits) circled at the
# peak reserved of its run under limit - margin (a strategy may reserve less when capped,
# as caching's flush and expandable's unmapping do). Run by
# `fragbench fit --plot F.png`:
#   gnuplot -e "fmt='png'; out='F.png'; dat='F.png.dat'; meta='F.png.meta.gp'; gpdir='plots'" plots/fit.gp
# The meta file sets n, names[], maxv[] (-1: nothing fits), ansr[], limit, margin, vary,
# workload; the data file holds one block per strategy: value, peak reserved (bytes),
# 1 when the value is at or below that strategy's answer.
load meta
w = 900
h = 560
load gpdir."/style.gp"
set datafile separator "\t"
div = 1024.0 ** 3
set title sprintf("What fits: %s, varying %s, limit %.3f GiB", workload, vary, limit / div)
set xlabel vary
set ylabel "peak reserved (GiB): lines uncapped, circles under limit - margin"
set grid xtics ytics lc rgb "#e0e0e0"
set key top left Left reverse samplen 2
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
plot limit / div with lines lw 2 lc rgb "#d62728" title "the limit", \
     (limit - margin) / div with lines dt 2 lw 1.2 lc rgb "#606060" title sprintf("limit - margin (%.0f MiB)", margin / 1048576.0), \
     for [i=1:n] dat index (i - 1) using 1:($2 / div) with linespoints pt 7 ps 0.8 lc i title names[i], \
     for [i=1:n] '+' using (maxv[i]):(maxv[i] > 0 ? ansr[i] / div : NaN) every ::0::0 with points pt 6 ps 2.5 lw 2 lc i \
         title sprintf("%s: %s = %d", names[i], vary, maxv[i])
