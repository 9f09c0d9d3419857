# regress_compare.awk - the comparison behind `make regress`: the rows of a new sim
# suite run against the committed baseline, column by column as results/tolerance.csv
# says (exact unless listed). Prints a diff table (row, column, old, new, delta), timing
# (the median of new/old per allocator; a warning beyond the band), new and
# missing rows, and a closing verdict; exits 1 on a memory regression
# or a missing row, 0 otherwise. Needs plots/fb.awk:
#   awk -f plots/fb.awk -f tests/regress_compare.awk [-v only="caching bfc"] TOLERANCE BASELINE NEW
# Rows are matched on workload, trace, allocator, params, device and cap (a mincap row:
# "mincap", its cap being its result); the n-th repeat of one key gets "#n".

# the median of TR[a, c, 1..TCNT[a, c]]
function median_ratio(a, c,    n, i, j, t, x) {
  n = TCNT[a, c]
  for (i = 1; i <= n; i++) x[i] = TR[a, c, i]
  for (i = 2; i <= n; i++) { t = x[i]; for (j = i - 1; j >= 1 && x[j] > t; j--) x[j + 1] = x[j]; x[j + 1] = t }
  return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
}

function isnum(x) { return x ~ /^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ }

function row_key(   cap, k) {
  # a mincap row's cap is its result, not its key
  if (v("mincap_bytes") != "" || v("mincap_x") != "") cap = "mincap"
  else cap = v("cap_x") != "" ? v("cap_x") "x" : (v("cap_bytes") != "" ? v("cap_bytes") "B" : "-")
  k = v("workload") "|" v("trace") "|" v("allocator") "|" v("params") "|" v("device") "|" cap
  SEEN[FILENUM, k]++
  if (SEEN[FILENUM, k] > 1) k = k "|#" SEEN[FILENUM, k]
  return k
}

# how a key reads in the table: "gpt_train caching cap 1.05x"
function key_label(k,    p, w, s, cap, n) {
  n = split(k, p, "|")
  w = workload_label(p[1], p[2])
  if (length(w) > 44) w = substr(w, 1, 41) "..."
  s = strategy_label(p[3], p[4])
  cap = p[6] == "-" ? "uncapped" : (p[6] == "mincap" ? "mincap" : "cap " p[6])
  return w " " s " " cap (p[5] != "sim" ? " dev " p[5] : "") (n > 6 ? " " p[7] : "")
}

function delta(o, n,    d) {
  if (!isnum(o) || !isnum(n)) return ""
  d = n - o
  if (d == int(d) && d < 1e15 && d > -1e15) d = sprintf("%+.0f", d)
  else d = sprintf("%+.6g", d)
  if (o + 0 != 0) d = d sprintf(" (%+.2f%%)", (n - o) * 100 / (o < 0 ? -o : o))
  return d
}

function add_line(kind, k, c, o, n, d) {
  NL++; L_KIND[NL] = kind; L_ROW[NL] = key_label(k); L_COL[NL] = c; L_OLD[NL] = o; L_NEW[NL] = n; L_D[NL] = d
}

BEGIN {
  if (only != "") { n = split(only, names, " "); for (i = 1; i <= n; i++) ONLY[names[i]] = 1 }
  MAXLINES = 80
  MIN_TIMED_EVENTS = 10000   # host timing of shorter rows is noise: no warnings there
}

FNR == 1 { FILENUM++ }

# the tolerance file: column,mode,abs,rel,factor
FILENUM == 1 {
  if ($0 ~ /^#/ || $0 ~ /^[ \t\r]*$/ || $0 ~ /^column,/) next
  csv_split($0, t)
  MODE[t[1]] = t[2]; TABS[t[1]] = t[3] + 0; TREL[t[1]] = t[4] + 0; TFAC[t[1]] = t[5] + 0
  next
}

!rows_line($0) { next }

{
  if (only != "" && !(v("allocator") in ONLY)) next
  k = row_key()
  if (!((FILENUM, k) in HAS)) { HAS[FILENUM, k] = 1; NK[FILENUM]++; KEYS[FILENUM, NK[FILENUM]] = k }
  for (i = 1; i <= NCOL; i++) {
    c = COLNAME[i]
    VAL[FILENUM, k, c] = F[i]
    if (!((FILENUM, c) in HASCOL)) { HASCOL[FILENUM, c] = 1; NC[FILENUM]++; COLS[FILENUM, NC[FILENUM]] = c }
  }
}

END {
  if (FILENUM < 3) { print "regress: compare needs a tolerance file, a baseline and a new CSV" > "/dev/stderr"; exit 2 }
  OLDF = 2; NEWF = 3
  ndiff = 0; nrowdiff = 0; nmiss = 0; nnew = 0; nwarn = 0; ncolmiss = 0
  for (j = 1; j <= NC[OLDF]; j++) {
    c = COLS[OLDF, j]
    if (!((NEWF, c) in HASCOL) && MODE[c] != "ignore") { COLMISS[++ncolmiss] = c }
  }
  for (i = 1; i <= NK[OLDF]; i++) {
    k = KEYS[OLDF, i]
    if (!((NEWF, k) in HAS)) { nmiss++; add_line("missing", k, "(row)", "present", "missing", ""); continue }
    rowbad = 0
    for (j = 1; j <= NC[OLDF]; j++) {
      c = COLS[OLDF, j]
      if (!((NEWF, c) in HASCOL)) continue
      m = (c in MODE) ? MODE[c] : "exact"
      if (m == "ignore") continue
      o = VAL[OLDF, k, c]; n = VAL[NEWF, k, c]
      if (m == "warn") {
        # one row's time is noise on a shared machine: the median ratio per allocator
        if (VAL[NEWF, k, "events"] + 0 >= MIN_TIMED_EVENTS && isnum(o) && isnum(n) && o > 0 && n > 0) {
          a = VAL[NEWF, k, "allocator"]
          if (!((a, c) in TCNT)) { if (!(a in TA)) { TA[a] = 1; NTA++; TALLOC[NTA] = a } ; TCOL[a, ++TNC[a]] = c }
          TR[a, c, ++TCNT[a, c]] = n / o
        }
        continue
      }
      if (o == n) continue
      if (m == "within" && isnum(o) && isnum(n)) {
        d = n - o; if (d < 0) d = -d
        if (d <= TABS[c] + TREL[c] * (o < 0 ? -o : o)) continue
      }
      ndiff++; rowbad = 1
      a = VAL[OLDF, k, "allocator"]
      if (!(a in DA)) DAL[++NDA] = a; DA[a]++
      if (!(c in DC)) DCL[++NDC] = c; DC[c]++
      add_line("diff", k, c, o == "" ? "(empty)" : o, n == "" ? "(empty)" : n, delta(o, n))
    }
    nrowdiff += rowbad
  }
  for (i = 1; i <= NK[NEWF]; i++) {
    k = KEYS[NEWF, i]
    if (!((OLDF, k) in HAS)) { nnew++; add_line("new", k, "(row)", "-", VAL[NEWF, k, "status"], "new row") }
  }

  # timing: the median of new/old per allocator and column
  for (i = 1; i <= NTA; i++) {
    a = TALLOC[i]; line = ""
    for (j = 1; j <= TNC[a]; j++) {
      c = TCOL[a, j]; g = median_ratio(a, c)
      line = line sprintf(" %s x%.2f", c, g)
      if (TFAC[c] > 1 && (g > TFAC[c] || g < 1 / TFAC[c])) {
        nwarn++; WARN[nwarn] = sprintf("%s: %s x%.2f against the baseline (median over %d rows; band %gx)", a, c, g, TCNT[a, c], TFAC[c])
      }
    }
    TIMING = TIMING sprintf("  %-12s%s\n", a, line)
  }

  # the table
  if (NL > 0) {
    w1 = length("row"); w2 = length("column"); w3 = length("old"); w4 = length("new")
    for (i = 1; i <= NL && i <= MAXLINES; i++) {
      if (length(L_ROW[i]) > w1) w1 = length(L_ROW[i]); if (length(L_COL[i]) > w2) w2 = length(L_COL[i])
      if (length(L_OLD[i]) > w3) w3 = length(L_OLD[i]); if (length(L_NEW[i]) > w4) w4 = length(L_NEW[i])
    }
    fmt = "%-" w1 "s  %-" w2 "s  %" w3 "s  %" w4 "s  %s\n"
    printf fmt, "row", "column", "old", "new", "delta"
    for (i = 1; i <= NL && i <= MAXLINES; i++) printf fmt, L_ROW[i], L_COL[i], L_OLD[i], L_NEW[i], L_D[i]
    if (NL > MAXLINES) printf "... and %d more lines (sh tests/regress.sh BIN --keep DIR keeps the new CSV)\n", NL - MAXLINES
  }
  if (ndiff > 0) {
    line = ""; for (i = 1; i <= NDA; i++) line = line sprintf(" %s %d,", DAL[i], DA[DAL[i]])
    sub(/,$/, "", line); printf "differences by allocator:%s\n", line
    line = ""; for (i = 1; i <= NDC; i++) line = line sprintf(" %s %d,", DCL[i], DC[DCL[i]])
    sub(/,$/, "", line); printf "differences by column:%s\n", line
  }
  for (i = 1; i <= ncolmiss; i++) printf "column %s: in the baseline, not in the new rows (columns are never renamed or removed)\n", COLMISS[i]
  if (TIMING != "") printf "host time, new/old (median over rows of >= %d events; informational):\n%s", MIN_TIMED_EVENTS, TIMING
  if (nwarn > 0) {
    printf "timing warnings (not failures):\n"
    for (i = 1; i <= nwarn && i <= 20; i++) printf "  %s\n", WARN[i]
    if (nwarn > 20) printf "  ... and %d more\n", nwarn - 20
  }
  fail = ndiff > 0 || nmiss > 0 || ncolmiss > 0
  printf "regress: %s: %d rows compared, %d memory differences in %d rows, %d missing rows, %d new rows, %d timing warnings\n", \
    fail ? "FAIL" : "ok", NK[OLDF] - nmiss, ndiff, nrowdiff, nmiss, nnew, nwarn
  if (fail) printf "regress: if the change is intended, run 'make baseline' and commit results/baseline-sim.csv with the change that explains it\n"
  else if (nnew > 0) printf "regress: new rows pass; 'make baseline' adds them to the baseline\n"
  exit fail ? 1 : 0
}
