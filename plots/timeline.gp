# timeline.gp - one workload's memory over the run: one panel per strategy, each with the
# bytes the workload had requested (black), the bytes in blocks handed out (blue, under
# it) and the bytes reserved from the device (red, shaded), and dashed, the whole run's
# peak requested and peak reserved from runs.csv (the samples, taken at ITER events or
# spread over a run without them, can fall between peaks; the step lines show the
# highest level between samples). A panel's title says when runs.csv found a leak. Shared axes, so that panels compare at a
# glance, unless one strategy reserves over 4x what another does: then each panel has
# its own y scale and says so.
# Run by plots/plots.sh:
#   gnuplot -e "fmt='png'; out='O.png'; dat='D/timeline-W.dat'; meta='D/timeline-W.meta.gp'; dev='D/device.meta.gp'; gpdir='plots'" plots/timeline.gp
# The meta file (written by `fragbench report`) sets n, names[], colors[], peakreq[],
# peakres[] (bytes, -1 = unknown), panelmax[] (the top of each panel's data), notes[]
# (a leak, or ""), leakbase[] (requested at iteration 2 when a leak is drawn, else -1),
# leakdiv, leakunit, unit, div, ymax, xmax, xdiv and xsuffix (events in k or M),
# workload, cap (the limit the rows ran under, bytes; 0 = none) with caplo/caphi (the
# interval inferred from the snapshot's OOM, drawn as a band; 0 = given) and captext,
# oomev[]/oomres[] (where a run ran out of memory: event and its last reserved; -1 =
# completed); the data file holds one block per strategy: event,
# requested, allocated, reserved (bytes). The limit is a purple dash-dot line in every
# panel, an OOM a red cross where the run died.
load meta
load dev
cols = (n <= 1) ? 1 : ((n <= 4) ? 2 : 3)
rows = int((n + cols - 1) / cols)
w = (cols == 1) ? 900 : 460 * cols + 60
h = 250 * rows + 100
load gpdir."/style.gp"
set datafile separator "\t"
set format x "%g".xsuffix
set xrange [0 : (xmax > 0 ? xmax / xdiv : 1)]
# shared y axis unless one panel would flatten another (largest/smallest panel > 4x)
minpanel = ymax
do for [i=1:n] { minpanel = (panelmax[i] > 0 && panelmax[i] < minpanel) ? panelmax[i] : minpanel }
shared = (minpanel > 0 && ymax / minpanel <= 4)
set ytics nomirror
set grid xtics ytics lc rgb "#e0e0e0"
set style fill transparent solid 0.18 noborder
hasleak = 0
do for [i=1:n] { hasleak = (leakbase[i] >= 0) ? 1 : hasleak }
anyoom = 0
do for [i=1:n] { anyoom = (oomev[i] >= 0) ? 1 : anyoom }
# manual layout: the title, a full-width key under it, then the panels
titlepx = 40.0
keypx = 80.0
top = 1.0 - (titlepx + keypx) / h
cw = 1.0 / cols
ch = top / rows
if (hasleak) { set rmargin 11 }   # room for the right axis, the same in every panel
set multiplot title sprintf("%s: memory over the run, per strategy (device: %s)", workload, device_name)
unset key
do for [i=1:n] {
  c = (i - 1) % cols
  r = int((i - 1) / cols)
  set origin c * cw, top - (r + 1) * ch
  set size cw, ch
  top_i = shared ? ymax : (panelmax[i] > cap ? panelmax[i] : cap)
  ytop = top_i > 0 ? top_i / div * 1.08 : 1
  set yrange [0 : ytop]
  set title names[i].(shared ? "" : " (own scale)").(strlen(notes[i]) > 0 ? ": ".notes[i] : "") offset 0, -0.4
  set ylabel (c == 0) ? unit : ""
  set xlabel (i > n - cols) ? "event".(xdiv > 1 ? " (".xsuffix." = ".sprintf("%g", xdiv).")" : "") : ""
  unset arrow
  unset object 50
  unset label 5
  if (cap > 0) {
    if (caphi > caplo) { set object 50 rect from graph 0, first caplo / div to graph 1, first (caphi / div < ytop ? caphi / div : ytop) behind fc rgb "#7b3294" fs transparent solid 0.10 noborder }
    set arrow 3 from graph 0, first cap / div to graph 1, first cap / div nohead dt 4 lw 1.8 lc rgb "#7b3294" front
  }
  if (oomev[i] >= 0) { set label 5 "OOM" at first oomev[i] / xdiv, first oomres[i] / div right offset -0.8, 0.7 point pt 2 ps 2.2 lw 3 lc rgb "#c00000" tc rgb "#c00000" front font ",10" }
  if (peakres[i] >= 0) { set arrow 1 from graph 0, first peakres[i] / div to graph 1, first peakres[i] / div nohead dt 2 lw 1.2 lc rgb "#d62728" }
  if (peakreq[i] >= 0) { set arrow 2 from graph 0, first peakreq[i] / div to graph 1, first peakreq[i] / div nohead dt 2 lw 1.2 lc rgb "black" }
  if (leakbase[i] >= 0) {
    # the leak, on the right axis: requested above its level at iteration 2
    set y2tics nomirror tc rgb "#2ca02c"
    set y2range [*:*]
    set y2label (c == cols - 1 || i == n) ? "above iteration 2 (".leakunit.")" : "" tc rgb "#2ca02c"
    plot dat index (i - 1) using ($1 / xdiv):($4 / div) with filledcurves y1=0 lc rgb "#d62728", \
         '' index (i - 1) using ($1 / xdiv):($6 / div) with steps lc rgb "#7f0000" lw 1, \
         '' index (i - 1) using ($1 / xdiv):($5 / div) with steps lc rgb "#636363" lw 1, \
         '' index (i - 1) using ($1 / xdiv):($4 / div) with lines lc rgb "#d62728" lw 1.5, \
         '' index (i - 1) using ($1 / xdiv):($3 / div) with lines lc rgb "#6baed6" lw 3.5, \
         '' index (i - 1) using ($1 / xdiv):($2 / div) with lines lc rgb "black" lw 1.2, \
         '' index (i - 1) using ($1 / xdiv):(($2 - leakbase[i]) / leakdiv) axes x1y2 with lines lc rgb "#2ca02c" lw 2
  } else {
    unset y2tics
    unset y2label
    plot dat index (i - 1) using ($1 / xdiv):($4 / div) with filledcurves y1=0 lc rgb "#d62728", \
         '' index (i - 1) using ($1 / xdiv):($6 / div) with steps lc rgb "#7f0000" lw 1, \
         '' index (i - 1) using ($1 / xdiv):($5 / div) with steps lc rgb "#636363" lw 1, \
         '' index (i - 1) using ($1 / xdiv):($4 / div) with lines lc rgb "#d62728" lw 1.5, \
         '' index (i - 1) using ($1 / xdiv):($3 / div) with lines lc rgb "#6baed6" lw 3.5, \
         '' index (i - 1) using ($1 / xdiv):($2 / div) with lines lc rgb "black" lw 1.2
  }
}
unset y2tics
unset y2label
# the key, alone in a full-width strip under the title
set rmargin
unset arrow
unset object 50
unset label 5
unset title
unset xlabel
unset ylabel
unset border
unset tics
unset grid
set origin 0, top
set size 1, keypx / h
set xrange [0 : 1]
set yrange [0 : 1]
set key center center horizontal maxrows 3 Left reverse samplen 2 width 1
plot NaN with filledcurves y1=0 lc rgb "#d62728" title "reserved (shaded)", \
     NaN with lines lc rgb "#6baed6" lw 3.5 title "allocated", \
     NaN with lines lc rgb "black" lw 1.2 title "requested", \
     NaN with steps lc rgb "#7f0000" lw 1 title "reserved, highest between samples", \
     NaN with steps lc rgb "#636363" lw 1 title "requested, highest between samples", \
     NaN with lines dt 2 lw 1.2 lc rgb "#d62728" title "peak reserved (whole run)", \
     NaN with lines dt 2 lw 1.2 lc rgb "black" title "peak requested (whole run)", \
     NaN with lines lc rgb "#2ca02c" lw 2 title (hasleak ? "leak: requested above iteration 2 (right axis)" : ""), \
     NaN with lines dt 4 lw 1.8 lc rgb "#7b3294" title (cap > 0 ? captext : ""), \
     NaN with points pt 2 ps 1.6 lw 3 lc rgb "#c00000" title (anyoom ? "OOM: where the run died" : "")
unset multiplot
