# prep.awk - turns one bench run folder's CSVs into the gnuplot data and settings files
# that plots/*.gp draw (run by plots/plots.sh; load plots/fb.awk first).
#
#   awk -f fb.awk -f prep.awk -v D=OUTDIR RUN/runs.csv RUN/mincap.csv RUN/capsweep.csv RUN/timeline-*.csv
#
# Writes into D: overhead.dat, mincap.dat (workloads as rows, strategies as columns),
# latency.dat (strategies as rows), timeline-W.dat and capsweep-W.dat (one block per
# strategy), each with a NAME.meta.gp of gnuplot settings (arrays of labels and colours,
# ranges, units). Prints one line per plot to draw: "bars overhead", "bars mincap",
# "latency latency", "timeline timeline-W", "capsweep capsweep-W".
#
# Colours: each strategy keeps one colour index in every plot (order of first appearance,
# runs.csv first). Workloads and strategies are whatever the CSVs hold.

function kind_of(fname,    b) {
  b = fname; sub(/.*\//, "", b)
  if (b ~ /^timeline-.*\.csv$/) return "timeline"
  sub(/\.csv$/, "", b)
  return b
}

function add_strategy(s) {
  if (!(s in SIDX)) { SIDX[s] = ++NS; SNAME[NS] = s }
  return SIDX[s]
}
function add_workload(w) {
  if (!(w in WIDX)) { WIDX[w] = ++NW; WNAME[NW] = w }
  return WIDX[w]
}

# file-name-safe form of a label
function safe(s) { gsub(/[^A-Za-z0-9._-]/, "_", s); return s }
# a gnuplot double-quoted string
function gq(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }

# How much a row is preferred for the per-workload figures: uncapped, then the aggregate.
function row_rank(   r) {
  r = 0
  if (v("cap_bytes") == "" && v("cap_x") == "") r += 2
  if (v("device") == "all") r += 1
  return r
}

function median(a, n,    i, j, t) {
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# the gnuplot array `name` of strategy labels and `colors` of their colour indices
function meta_strategies(meta, list, n,    i, s, m) {
  m = n > 0 ? n : 1
  printf "array names[%d]\narray colors[%d]\n", m, m > meta
  for (i = 1; i <= n; i++) {
    s = list[i]
    printf "names[%d] = %s\ncolors[%d] = %d\n", i, gq(s), i, SIDX[s] > meta
  }
  printf "n = %d\n", n > meta
}

# the workload a timeline-NAME.csv belongs to: NAME, or the one trace label that NAME is
# the short form of (bench folders that named trace timelines up to the first dot)
function timeline_workload(name,    i, n, found) {
  if (name in WIDX) return name
  n = 0
  for (i = 1; i <= NW; i++) if (label_short(WNAME[i]) == name) { found = WNAME[i]; n++ }
  return n == 1 ? found : name
}

FNR == 1 {
  kind = kind_of(FILENAME)
  if (kind == "timeline") {
    tl_name = FILENAME; sub(/.*\//, "", tl_name); sub(/^timeline-/, "", tl_name); sub(/\.csv$/, "", tl_name)
    tl_name = timeline_workload(tl_name)
  }
}

!rows_line($0) { next }

kind == "runs" || kind == "mincap" || kind == "capsweep" {
  w = workload_label(v("workload"), v("trace"))
  s = strategy_label(v("allocator"), v("params"))
  add_strategy(s)
  if (DEVICE_NAME == "" && v("device_name") != "") DEVICE_NAME = v("device_name")
}

kind == "runs" {
  add_workload(w)
  if (v("peak_requested") != "" && v("peak_requested") + 0 > PREQ[w] + 0) PREQ[w] = v("peak_requested") + 0
  if (!status_ok(v("status"))) next
  k = w SUBSEP s
  r = row_rank()
  if ((k in RUN_RANK) && RUN_RANK[k] >= r) next
  RUN_RANK[k] = r
  RUN_OVH[k] = v("overhead")
  RUN_PREQ[k] = v("peak_requested"); RUN_PRES[k] = v("peak_reserved")
  RUN_NS[k] = v("ns_per_op"); RUN_P50[k] = v("p50_ns"); RUN_P99[k] = v("p99_ns")
  next
}

kind == "mincap" {
  add_workload(w)
  if (v("mincap_x") == "") next
  MIN_X[w SUBSEP s] = v("mincap_x")
  next
}

kind == "capsweep" {
  x = v("cap_x")
  if (x == "" && v("cap_bytes") != "" && v("peak_requested") + 0 > 0) x = v("cap_bytes") / v("peak_requested")
  if (x == "" || v("peak_reserved") == "") next
  if (!(w in CS_W)) { CS_W[w] = 1; CS_NW++; CS_WNAME[CS_NW] = w }
  k = w SUBSEP s
  if (!(k in CS_N)) { CS_N[k] = 0; CS_NS[w]++; CS_SNAME[w, CS_NS[w]] = s }
  i = ++CS_N[k]
  CS_X[k, i] = x + 0; CS_R[k, i] = v("peak_reserved"); CS_OK[k, i] = v("completed") == "1" ? 1 : 0
  if (v("peak_requested") + 0 > CS_PREQ[w] + 0) CS_PREQ[w] = v("peak_requested") + 0
  next
}

kind == "timeline" {
  w = tl_name
  if (!(w in TL_W)) { TL_W[w] = 1; TL_NW++; TL_WNAME[TL_NW] = w }
  s = v("allocator")
  add_strategy(s)
  k = w SUBSEP s
  if (!(k in TL_N)) { TL_N[k] = 0; TL_NS[w]++; TL_SNAME[w, TL_NS[w]] = s }
  i = ++TL_N[k]
  TL_E[k, i] = v("event"); TL_Q[k, i] = v("requested"); TL_A[k, i] = v("allocated"); TL_R[k, i] = v("reserved")
  # the highest levels since the previous sample (older timelines lack them: the levels)
  TL_MQ[k, i] = v("max_requested") != "" ? v("max_requested") : TL_Q[k, i]
  TL_MR[k, i] = v("max_reserved") != "" ? v("max_reserved") : TL_R[k, i]
  next
}

# grouped bars: workloads as rows, strategies with any value as columns
function write_bars(name, VAL, ylabel, title,    dat, meta, i, j, k, n, list, ymin, ymax, x, line, any, labw, nrows) {
  n = 0
  for (j = 1; j <= NS; j++) {
    any = 0
    for (i = 1; i <= NW; i++) if ((WNAME[i] SUBSEP SNAME[j]) in VAL) any = 1
    if (any) list[++n] = SNAME[j]
  }
  if (n == 0) return
  dat = D "/" name ".dat"; meta = D "/" name ".meta.gp"
  line = "# workload"
  for (j = 1; j <= n; j++) line = line "\t" list[j]
  print line > dat
  ymin = ""; ymax = 0; labw = 0
  for (i = 1; i <= NW; i++) {
    line = WNAME[i]; any = 0
    for (j = 1; j <= n; j++) {
      k = WNAME[i] SUBSEP list[j]
      if ((k in VAL) && VAL[k] != "") {
        x = VAL[k] + 0; line = line "\t" VAL[k]; any = 1
        if (x > ymax) ymax = x
        if (x > 0 && (ymin == "" || x < ymin)) ymin = x
      } else line = line "\t-"
    }
    if (any) { print line > dat; nrows++; labw += length(WNAME[i]) + 2 }
  }
  close(dat)
  meta_strategies(meta, list, n)
  printf "nclusters = %d\nymin = %g\nymax = %g\nlabel_chars = %d\n", nrows, ymin == "" ? 1 : ymin, ymax, labw > meta
  printf "ylab = %s\nptitle = %s\n", gq(ylabel), gq(title) > meta
  close(meta)
  print "bars " name
}

function write_latency(    dat, meta, j, i, s, cnt, a, b, c, ymin, ymax, line, list, n, k) {
  dat = D "/latency.dat"; meta = D "/latency.meta.gp"
  ymin = ""; ymax = 0; n = 0
  for (j = 1; j <= NS; j++) {
    s = SNAME[j]; cnt = 0
    split("", a); split("", b); split("", c)
    for (i = 1; i <= NW; i++) {
      k = WNAME[i] SUBSEP s
      if ((k in RUN_NS) && RUN_NS[k] != "" && RUN_P50[k] != "" && RUN_P99[k] != "") {
        cnt++; a[cnt] = RUN_NS[k] + 0; b[cnt] = RUN_P50[k] + 0; c[cnt] = RUN_P99[k] + 0
      }
    }
    if (cnt == 0) continue
    list[++n] = s
    line = s
    line = line "\t" stats(a, cnt) "\t" stats(b, cnt) "\t" stats(c, cnt)
    if (n == 1) print "# strategy\tmean ns/op\tlo\thi\tp50\tlo\thi\tp99\tlo\thi" > dat
    print line > dat
    if (cnt > NWL) NWL = cnt
  }
  if (n == 0) return
  close(dat)
  meta_strategies(meta, list, n)
  printf "ymin = %g\nymax = %g\nnworkloads = %d\n", LAT_MIN == "" ? 1 : LAT_MIN, LAT_MAX, NWL > meta
  close(meta)
  print "latency latency"
}
# "median<TAB>min<TAB>max" of a[1..n]; widens LAT_MIN, LAT_MAX
function stats(a, n,    i, lo, hi) {
  lo = a[1]; hi = a[1]
  for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
  if (hi > LAT_MAX) LAT_MAX = hi
  if (lo > 0 && (LAT_MIN == "" || lo < LAT_MIN)) LAT_MIN = lo
  return sprintf("%g\t%g\t%g", median(a, n), lo, hi)
}

function write_timeline(w,    dat, meta, j, i, s, k, list, n, ymax, xmax, x, pq, pr, py) {
  dat = D "/timeline-" safe(w) ".dat"; meta = D "/timeline-" safe(w) ".meta.gp"
  n = 0; ymax = 0; xmax = 0
  for (j = 1; j <= NS; j++) if ((w SUBSEP SNAME[j]) in TL_N) list[++n] = SNAME[j]
  for (j = 1; j <= n; j++) {
    k = w SUBSEP list[j]
    # the whole run's peaks (runs.csv): samples at ITER events can miss them
    pq = ((k in RUN_PREQ) && RUN_PREQ[k] != "") ? RUN_PREQ[k] + 0 : -1
    pr = ((k in RUN_PRES) && RUN_PRES[k] != "") ? RUN_PRES[k] + 0 : -1
    PEAKS = PEAKS sprintf("peakreq[%d] = %.0f\npeakres[%d] = %.0f\n", j, pq, j, pr)
    py = pr > pq ? pr : pq
    printf "# %s\n", list[j] > dat
    for (i = 1; i <= TL_N[k]; i++) {
      printf "%s\t%s\t%s\t%s\t%s\t%s\n", TL_E[k, i], TL_Q[k, i], TL_A[k, i], TL_R[k, i], TL_MQ[k, i], TL_MR[k, i] > dat
      x = TL_R[k, i] + 0; if (x > py) py = x
      x = TL_MR[k, i] + 0; if (x > py) py = x
      x = TL_A[k, i] + 0; if (x > py) py = x
      x = TL_E[k, i] + 0; if (x > xmax) xmax = x
    }
    PEAKS = PEAKS sprintf("panelmax[%d] = %.0f\n", j, py)
    if (py > ymax) ymax = py
    printf "\n\n" > dat
  }
  close(dat)
  meta_strategies(meta, list, n)
  x = n > 0 ? n : 1
  printf "array peakreq[%d]\narray peakres[%d]\narray panelmax[%d]\n%s", x, x, x, PEAKS > meta
  PEAKS = ""
  printf "unit = %s\ndiv = %.1f\nymax = %g\nxmax = %g\nworkload = %s\n", gq(unit_for(ymax)), unit_div(unit_for(ymax)), ymax, xmax, gq(w) > meta
  close(meta)
  print "timeline timeline-" safe(w)
}

function write_capsweep(w,    dat, meta, j, i, s, k, list, n, ymin, ymax, xmin, xmax, x, o, t) {
  dat = D "/capsweep-" safe(w) ".dat"; meta = D "/capsweep-" safe(w) ".meta.gp"
  n = 0; ymin = ""; ymax = 0; xmin = ""; xmax = 0
  for (j = 1; j <= NS; j++) if ((w SUBSEP SNAME[j]) in CS_N) list[++n] = SNAME[j]
  for (j = 1; j <= n; j++) {
    k = w SUBSEP list[j]
    # sort this strategy's points by cap
    for (i = 2; i <= CS_N[k]; i++) {
      x = CS_X[k, i]; t = CS_R[k, i]; o = CS_OK[k, i]
      for (s = i - 1; s >= 1 && CS_X[k, s] > x; s--) { CS_X[k, s + 1] = CS_X[k, s]; CS_R[k, s + 1] = CS_R[k, s]; CS_OK[k, s + 1] = CS_OK[k, s] }
      CS_X[k, s + 1] = x; CS_R[k, s + 1] = t; CS_OK[k, s + 1] = o
    }
    printf "# %s\n", list[j] > dat
    for (i = 1; i <= CS_N[k]; i++) {
      printf "%g\t%s\t%d\n", CS_X[k, i], CS_R[k, i], CS_OK[k, i] > dat
      if (CS_R[k, i] + 0 > ymax) ymax = CS_R[k, i] + 0
      if (ymin == "" || CS_R[k, i] + 0 < ymin) ymin = CS_R[k, i] + 0
      if (CS_X[k, i] > xmax) xmax = CS_X[k, i]
      if (xmin == "" || CS_X[k, i] < xmin) xmin = CS_X[k, i]
    }
    printf "\n\n" > dat
  }
  close(dat)
  x = (w in PREQ) ? PREQ[w] : CS_PREQ[w]
  if (x * xmax > ymax) ymax = x * xmax
  meta_strategies(meta, list, n)
  if (x * xmin < ymin) ymin = x * xmin
  printf "ymin = %.0f\n", ymin > meta
  printf "unit = %s\ndiv = %.1f\nymax = %g\nxmin = %g\nxmax = %g\npreq = %.0f\nworkload = %s\n", gq(unit_for(ymax)), unit_div(unit_for(ymax)), ymax, xmin, xmax, x, gq(w) > meta
  close(meta)
  print "capsweep capsweep-" safe(w)
}

END {
  printf "device_name = %s\n", gq(DEVICE_NAME) > (D "/device.meta.gp")
  close(D "/device.meta.gp")
  write_bars("overhead", RUN_OVH, "peak reserved / peak requested", "Memory overhead per workload and strategy (uncapped runs)")
  write_bars("mincap", MIN_X, "smallest cap that completes / peak requested", "Minimum capacity per workload and strategy")
  write_latency()
  for (i = 1; i <= TL_NW; i++) write_timeline(TL_WNAME[i])
  for (i = 1; i <= CS_NW; i++) write_capsweep(CS_WNAME[i])
}
