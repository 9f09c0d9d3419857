# history.gp - peak reserved of one workload over many bench runs, one line per strategy
# (a gap where its row died or is absent), its mincap dashed in the same colour where
# mincap.csv had one, and the largest step (history.h's rule) drawn as a red arrow labelled
# with the commit where it happened. Run by `fragbench history --plot DIR`:
#   gnuplot -e "fmt='png'; out='F.png'; dat='F.png.dat'; meta='F.png.meta.gp'; gpdir='plots'" plots/history.gp
# The meta file sets n, names[], nm and mi[] (the strategies with a mincap), runs,
# workload, has_step (sx0, sy0, sx1, sy1 in run index and GiB, slabel); the data file
# holds one line per run: index, label, n peaks (GiB), n mincaps (GiB), "?" where none.
load meta
w = 960
h = 560
load gpdir."/style.gp"
set datafile separator "\t"
set datafile missing "?"
set title sprintf("Peak reserved across %d runs: %s", runs, workload)
set xlabel "run (commit, oldest first)"
set ylabel "peak reserved (GiB); dashed: mincap"
set grid xtics ytics lc rgb "#e0e0e0"
set key outside right top Left reverse samplen 2
set xtics rotate by -35 left
set offsets graph 0.03, graph 0.03, graph 0.08, graph 0.05
set xrange [0.5:runs + 0.5]
if (has_step) {
  set arrow 1 from sx0, sy0 to sx1, sy1 lw 3 lc rgb "#d62728" front
  if (sx1 > (runs + 1) / 2.0) {
    set label 1 slabel at sx1, sy1 offset -1, 1 right tc rgb "#d62728" front
  } else {
    set label 1 slabel at sx1, sy1 offset 1, 1 left tc rgb "#d62728" front
  }
}
plot for [i=1:n] dat using 1:(column(2 + i)):xtic(2) with linespoints pt 7 ps 0.9 lc i title names[i], \
     for [j=1:nm] dat using 1:(column(2 + n + mi[j])) with linespoints dt 2 pt 6 ps 0.7 lc mi[j] title names[mi[j]]." mincap"
