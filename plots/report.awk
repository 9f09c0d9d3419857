# report.awk - writes report.md for one bench run folder (run by plots/report.sh; load
# plots/fb.awk first):
#   awk -f fb.awk -f report.awk -v title=NAME -v imgs="overhead.png ..." \
#       RUN/env.txt RUN/runs.csv [RUN/mincap.csv] [RUN/capsweep.csv] > RUN/report.md
# Sections: the environment (env.txt), a summary derived from the numbers, the plots
# that apply to all workloads, then per workload a table (strategies as rows; best value
# of each column in bold) with that workload's plots. GitHub-flavoured Markdown.
#
# "Best" is the lowest value among rows that completed (status ok), leaving out the
# reference rows (REFERENCE below): raw, one cudaMalloc per request (the lower bound of
# memory on the sim device, paying the driver on every call), and the offline oracle,
# which sees the whole trace ahead.

BEGIN {
  REFERENCE["raw"] = "baseline"
  REFERENCE["oracle"] = "offline reference"
  n = split(imgs, a, " ")
  for (i = 1; i <= n; i++) IMG[a[i]] = 1
}

function kind_of(fname,    b) { b = fname; sub(/.*\//, "", b); sub(/\.(csv|txt)$/, "", b); return b }
function safe(s) { gsub(/[^A-Za-z0-9._-]/, "_", s); return s }
function add_strategy(s) { if (!(s in SIDX)) { SIDX[s] = ++NS; SNAME[NS] = s } }
function add_workload(w) { if (!(w in WIDX)) { WIDX[w] = ++NW; WNAME[NW] = w } }
function row_rank(   r) {
  r = 0
  if (v("cap_bytes") == "" && v("cap_x") == "") r += 2
  if (v("device") == "all") r += 1
  return r
}
# Markdown-safe cell text
function md(s) { gsub(/\|/, "\\|", s); return s }
function pct(a, b) { return b == 0 ? 0 : (a - b) * 100 / b }
# a multiple: three decimals near 1 (1.004x), two above
function fx(x) { return x == "" ? "" : sprintf(x + 0 < 1.1 ? "%.3fx" : "%.2fx", x) }

FNR == 1 { kind = kind_of(FILENAME) }

kind == "env" {
  line = $0; sub(/\r$/, "", line)
  if (line !~ /:/) next
  key = line; sub(/:.*/, "", key)
  val = line; sub(/^[^:]*:[ \t]*/, "", val)
  ENVK[++NENV] = key; ENVV[NENV] = val
  if (key == "device_name") DEVICE_NAME = val
  next
}

!rows_line($0) { next }

{
  w = workload_label(v("workload"), v("trace"))
  s = strategy_label(v("allocator"), v("params"))
  k = w SUBSEP s
}

kind == "runs" {
  add_workload(w); add_strategy(s)
  if (DEVICE_NAME == "") DEVICE_NAME = v("device_name")
  r = row_rank()
  if ((k in R_RANK) && R_RANK[k] >= r) next
  R_RANK[k] = r
  R_STATUS[k] = v("status"); R_PREQ[k] = v("peak_requested"); R_PRES[k] = v("peak_reserved")
  R_OVH[k] = v("overhead"); R_FRAG[k] = v("frag"); R_EXT[k] = v("ext_frag")
  R_NS[k] = v("ns_per_op"); R_P99[k] = v("p99_ns"); R_LEAK[k] = v("leak_bytes_per_iter")
  R_OOM[k] = v("first_oom_event"); R_DRV[k] = v("modeled_driver_ns")
  next
}

kind == "mincap" {
  add_workload(w); add_strategy(s)
  if (v("mincap_x") != "") { M_X[k] = v("mincap_x"); HAVE_MINCAP = 1; if (v("status") ~ /non-monotonic/) M_NM[k] = 1 }
  else if (!(k in M_X)) M_STATUS[k] = v("status")
  next
}

kind == "capsweep" {
  add_workload(w); add_strategy(s)
  x = v("cap_x")
  if (x == "") next
  HAVE_SWEEP = 1
  CAPS_OF[w] = 1
  if (v("completed") == "1") { if (!(k in C_FIRST) || x + 0 < C_FIRST[k]) C_FIRST[k] = x + 0 }
  else if (!(k in C_LASTFAIL) || x + 0 > C_LASTFAIL[k]) C_LASTFAIL[k] = x + 0
  if (!(k in C_ANY)) C_ANY[k] = 1
  next
}

# best (lowest) value of column ARR over workload w's eligible rows; "" if none
function best(ARR, w,    j, k, b) {
  b = ""
  for (j = 1; j <= NS; j++) {
    k = w SUBSEP SNAME[j]
    if (!eligible(k) || !(k in ARR) || ARR[k] == "") continue
    if (b == "" || ARR[k] + 0 < b + 0) b = ARR[k]
  }
  return b
}
function is_ref(s,    a) { a = s; sub(/:.*/, "", a); return a in REFERENCE }
function ref_word(s,    a) { a = s; sub(/:.*/, "", a); return REFERENCE[a] }
function is_skipped(k) { return (k in R_STATUS) && R_STATUS[k] ~ /^skipped/ }
function eligible(k,    p) { split(k, p, SUBSEP); return (k in R_STATUS) && status_ok(R_STATUS[k]) && !is_ref(p[2]) }
function cell(text, val, b) { return (b != "" && val != "" && val + 0 == b + 0) ? "**" text "**" : text }

# the sweep's smallest completing cap, marked when a larger cap failed (not monotonic)
function sweep_cell(k) {
  if (!(k in C_ANY)) return "-"
  if (!(k in C_FIRST)) return "none"
  return fx(C_FIRST[k]) ((k in C_LASTFAIL) && C_LASTFAIL[k] > C_FIRST[k] ? " (not monotonic)" : "")
}

# strategies of workload w with status ok, sorted by ARR ascending, into L[1..n]
function sorted_by(ARR, w, L,    j, k, n, i, t) {
  n = 0
  for (j = 1; j <= NS; j++) {
    k = w SUBSEP SNAME[j]
    if ((k in ARR) && ARR[k] != "" && (k in R_STATUS) && status_ok(R_STATUS[k])) L[++n] = SNAME[j]
  }
  for (i = 2; i <= n; i++) {
    t = L[i]
    for (j = i - 1; j >= 1 && ARR[w SUBSEP L[j]] + 0 > ARR[w SUBSEP t] + 0; j--) L[j + 1] = L[j]
    L[j + 1] = t
  }
  return n
}

function img(name, alt) {
  if ((name in IMG)) { printf "![%s](plots/%s)\n\n", alt, name; return 1 }
  return 0
}

# "a 1.04x, b 1.95x" for the strategies in L[1..n] by ARR
function listing(ARR, w, L, n,    i, t) {
  t = ""
  for (i = 1; i <= n; i++) t = t (i > 1 ? ", " : "") md(L[i]) " " fx(ARR[w SUBSEP L[i]]) (is_ref(L[i]) ? " (" ref_word(L[i]) ")" : "")
  return t
}

# one bullet per workload: who needs the least and by how much, the whole ranking (by
# the smallest cap that completes when mincap ran, else by uncapped overhead), the
# fastest, and what did not run to the end
function summary_line(w,    L, n, i, s, b, nb, txt, k, ML, mn, j, fastest, fns, skipped, oom, failed, st) {
  n = sorted_by(R_OVH, w, L)
  b = ""; nb = ""
  for (i = 1; i <= n; i++) {
    if (is_ref(L[i])) continue
    if (b == "") b = L[i]
    else if (nb == "") nb = L[i]
  }
  txt = "- **" md(w) "**"
  k = w SUBSEP (b != "" ? b : L[1])
  if ((k in R_PREQ) && R_PREQ[k] != "") txt = txt " (peak requested " fmt_bytes(R_PREQ[k]) ")"
  txt = txt ": "
  if (b != "") {
    txt = txt "**" md(b) "** reserves the least, " fx(R_OVH[w SUBSEP b]) " its peak requested (" fmt_bytes(R_PRES[w SUBSEP b]) ")"
    if (nb != "") txt = txt sprintf(", %.1f%% less than the next best, %s at %s", -pct(R_PRES[w SUBSEP b], R_PRES[w SUBSEP nb]), md(nb), fx(R_OVH[w SUBSEP nb]))
    txt = txt "."
    WINS[b]++
  } else txt = txt "no strategy completed."
  mn = 0
  if (HAVE_MINCAP) {
    for (j = 1; j <= NS; j++) if ((w SUBSEP SNAME[j]) in M_X) ML[++mn] = SNAME[j]
    for (i = 2; i <= mn; i++) { s = ML[i]; for (j = i - 1; j >= 1 && M_X[w SUBSEP ML[j]] + 0 > M_X[w SUBSEP s] + 0; j--) ML[j + 1] = ML[j]; ML[j + 1] = s }
  }
  if (mn > 0) txt = txt " Smallest cap that completes: " listing(M_X, w, ML, mn) "."
  else if (n > 0) txt = txt " Overhead: " listing(R_OVH, w, L, n) "."
  fastest = ""; fns = ""
  for (j = 1; j <= NS; j++) {
    k = w SUBSEP SNAME[j]
    if (eligible(k) && R_NS[k] != "" && (fns == "" || R_NS[k] + 0 < fns + 0)) { fastest = SNAME[j]; fns = R_NS[k] }
  }
  if (fastest != "") { txt = txt sprintf(" Fastest: %s, %.0f ns per call.", md(fastest), fns); FAST[fastest]++ }
  skipped = ""; oom = ""; failed = ""
  for (j = 1; j <= NS; j++) {
    k = w SUBSEP SNAME[j]
    if (!(k in R_STATUS) || status_ok(R_STATUS[k])) continue
    st = R_STATUS[k]
    if (st ~ /^skipped/) { sub(/^skipped:? */, "", st); skipped = skipped (skipped == "" ? "" : ", ") md(SNAME[j]) (st != "" ? " (" md(st) ")" : "") }
    else if (st == "oom") oom = oom (oom == "" ? "" : ", ") md(SNAME[j])
    else failed = failed (failed == "" ? "" : ", ") md(SNAME[j]) " (" md(st) ")"
  }
  if (oom != "") txt = txt " Out of memory: " oom "."
  if (failed != "") txt = txt " Failed: " failed "."
  if (skipped != "") txt = txt " Skipped: " skipped "."
  print txt
}

function workload_table(w,    j, k, s, bp, bo, bf, be, bm, bn, b9, bd, hdr, sep, line, st, any) {
  bp = best(R_PRES, w); bo = best(R_OVH, w); bf = best(R_FRAG, w); be = best(R_EXT, w); bd = best(R_DRV, w)
  bn = best(R_NS, w); b9 = best(R_P99, w); bm = ""
  if (HAVE_MINCAP) {
    for (j = 1; j <= NS; j++) {
      k = w SUBSEP SNAME[j]
      if ((k in M_X) && !is_ref(SNAME[j]) && (bm == "" || M_X[k] + 0 < bm + 0)) bm = M_X[k]
    }
  }
  hdr = "| strategy | status | peak requested | peak reserved | overhead | frag | ext_frag |"
  sep = "|---|---|--:|--:|--:|--:|--:|"
  if (HAVE_MINCAP) { hdr = hdr " mincap_x |"; sep = sep "--:|" }
  if (HAVE_SWEEP) { hdr = hdr " sweep: completes from |"; sep = sep "--:|" }
  hdr = hdr " ns/op | p99 ns | driver time |"; sep = sep "--:|--:|--:|"
  print hdr; print sep
  for (j = 1; j <= NS; j++) {
    s = SNAME[j]; k = w SUBSEP s
    if (!(k in R_STATUS) && !(k in M_X) && !(k in C_ANY)) continue
    st = (k in R_STATUS) ? R_STATUS[k] : "-"
    line = "| " md(s) (is_ref(s) ? " (" ref_word(s) ")" : "") " | " md(st) (st == "oom" && R_OOM[k] != "" ? " at event " R_OOM[k] : "")
    line = line " | " fmt_bytes(R_PREQ[k])
    line = line " | " cell(fmt_bytes(R_PRES[k]), R_PRES[k], eligible(k) ? bp : "")
    line = line " | " cell(fx(R_OVH[k]), R_OVH[k], eligible(k) ? bo : "")
    line = line " | " cell(R_FRAG[k] == "" ? "" : sprintf("%.3f", R_FRAG[k]), R_FRAG[k], eligible(k) ? bf : "")
    line = line " | " cell(R_EXT[k] == "" ? "" : sprintf("%.3f", R_EXT[k]), R_EXT[k], eligible(k) ? be : "")
    if (HAVE_MINCAP) line = line " | " ((k in M_X) ? cell(fx(M_X[k]), M_X[k], is_ref(s) ? "" : bm) ((k in M_NM) ? " (fails above: not monotonic)" : "") : ((k in M_STATUS) && !is_skipped(k) ? md(M_STATUS[k]) : "-"))
    if (HAVE_SWEEP) line = line " | " (is_skipped(k) ? "-" : sweep_cell(k))
    line = line " | " cell(R_NS[k] == "" ? "" : sprintf("%.0f", R_NS[k]), R_NS[k], eligible(k) ? bn : "")
    line = line " | " cell(R_P99[k] == "" ? "" : sprintf("%.0f", R_P99[k]), R_P99[k], eligible(k) ? b9 : "")
    line = line " | " cell(R_DRV[k] == "" ? "" : sprintf("%.1f ms", R_DRV[k] / 1e6), R_DRV[k], eligible(k) ? bd : "") " |"
    print line
  }
  print ""
}

END {
  printf "# fragbench report: %s\n\n", title
  printf "Device: **%s**. Every workload x strategy, replayed on one device; overhead = peak reserved / peak requested (1.00x is the lower bound).\n\n", md(DEVICE_NAME)
  print "## Environment\n"
  print "| | |"; print "|---|---|"
  for (i = 1; i <= NENV; i++) printf "| %s | %s |\n", md(ENVK[i]), md(ENVV[i])
  print ""
  print "## Summary\n"
  for (i = 1; i <= NW; i++) summary_line(WNAME[i])
  nb = 0; bw = ""; fb = 0; fw = ""
  for (j = 1; j <= NS; j++) {
    s = SNAME[j]
    if (WINS[s] > nb) { nb = WINS[s]; bw = s }
    if (FAST[s] > fb) { fb = FAST[s]; fw = s }
  }
  if (bw != "") printf "\nLeast memory on the most workloads: **%s** (%d of %d).", md(bw), nb, NW
  if (fw != "") printf " Fastest on the most: **%s** (%d of %d).", md(fw), fb, NW
  print "\n"
  print "Best in bold: the lowest value among the strategies that completed, leaving out the references: raw (one cudaMalloc per request, the baseline: no allocator overhead, but the driver on every call) and oracle (an offline plan that sees the whole trace ahead). ns/op and p99 are host time per alloc or free call without the driver; driver time is the time in device calls over the run (modeled on sim, measured on a GPU).\n"
  if (("overhead." FMT) in IMG || ("mincap." FMT) in IMG || ("latency." FMT) in IMG) {
    print "## Plots\n"
    img("overhead." FMT, "memory overhead per workload and strategy")
    img("mincap." FMT, "smallest cap that completes per workload and strategy")
    img("latency." FMT, "host ns per call per strategy")
  }
  for (i = 1; i <= NW; i++) {
    w = WNAME[i]
    printf "## %s\n\n", md(w)
    workload_table(w)
    img("timeline-" safe(w) "." FMT, w ": memory over the run")
    img("capsweep-" safe(w) "." FMT, w ": cap sweep")
  }
}
