# style.gp - the shared look of the fragbench plots, loaded by the other plots/*.gp once
# they know their size: terminal (fmt = "png" | "svg", w x h pixels, output file `out`),
# one colour per strategy kept across every plot (a strategy's colour index comes from
# plots/prep.awk), light grid, no mirrored tics. Text is noenhanced: names like
# train_loop keep their underscores.
set encoding utf8
if (fmt eq "svg") {
  set terminal svg size w, h dynamic noenhanced font "sans,12" background rgb "white"
} else {
  set terminal pngcairo size w, h noenhanced font "sans,11" background rgb "white"
}
set output out
# tab10 plus two: distinguishable, and nothing as pale as gnuplot's default yellow
set linetype 1 lc rgb "#1f77b4" lw 2 pt 7
set linetype 2 lc rgb "#ff7f0e" lw 2 pt 7
set linetype 3 lc rgb "#2ca02c" lw 2 pt 7
set linetype 4 lc rgb "#d62728" lw 2 pt 7
set linetype 5 lc rgb "#9467bd" lw 2 pt 7
set linetype 6 lc rgb "#8c564b" lw 2 pt 7
set linetype 7 lc rgb "#e377c2" lw 2 pt 7
set linetype 8 lc rgb "#7f7f7f" lw 2 pt 7
set linetype 9 lc rgb "#bcbd22" lw 2 pt 7
set linetype 10 lc rgb "#17becf" lw 2 pt 7
set linetype 11 lc rgb "#393b79" lw 2 pt 7
set linetype 12 lc rgb "#637939" lw 2 pt 7
set linetype cycle 12
set grid ytics lc rgb "#d8d8d8" lw 1 dt 1
set border 3 lc rgb "#404040"
set tics nomirror
set key noautotitle
# logy125: label a log y axis at 1, 2, 5 x 10^k (gnuplot labels only the decades)
logy125 = "do for [e=-3:12] { set ytics add (sprintf('%g', 2*10.0**e) 2*10.0**e, sprintf('%g', 5*10.0**e) 5*10.0**e) }"
