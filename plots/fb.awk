# fb.awk - awk helpers of tests/regress.sh (the report and the plot data are C now:
# `fragbench report`, harness/report/):
# reading the results CSV (RFC 4180 quoting, columns looked up by header name, so new
# columns appended at the end change nothing), labels for workloads and strategies,
# byte units. POSIX awk (mawk, gawk, busybox): no gawk extensions. Numbers above 2^31
# are printed with printf "%.0f", never with print (mawk would write 2.1e+09).

# csv_split(line, f): split one CSV line into f[1..n]; returns n. Quoted fields may hold
# commas and doubled quotes.
function csv_split(line, f,    n, i, c, field, inq, len) {
  sub(/\r$/, "", line)
  if (index(line, "\"") == 0) return split(line, f, ",")
  n = 0; field = ""; inq = 0; len = length(line)
  for (i = 1; i <= len; i++) {
    c = substr(line, i, 1)
    if (inq) {
      if (c == "\"") {
        if (substr(line, i + 1, 1) == "\"") { field = field "\""; i++ }
        else inq = 0
      } else field = field c
    } else if (c == "\"") inq = 1
    else if (c == ",") { f[++n] = field; field = "" }
    else field = field c
  }
  f[++n] = field
  return n
}

# csv_quote(s): s as one CSV field (quoted when it holds a comma or a quote).
function csv_quote(s) {
  if (s !~ /[",]/) return s
  gsub(/"/, "\"\"", s)
  return "\"" s "\""
}

# Results files: the "# fragbench results v1" line, then the header, then rows.
# Call rows_line($0) for every line of a file: returns 1 for a data row (fields in F[],
# their count in NF_), 0 for the version line, the header (sets COL[name] = index,
# COLNAME[index] = name, NCOL) or a blank line.
function rows_line(line,    n, i, h) {
  if (FNR == 1) { HAVE_HDR = 0; split("", COL); split("", COLNAME); NCOL = 0 }
  if (line ~ /^#/ || line ~ /^[ \t\r]*$/) return 0
  if (!HAVE_HDR) {
    n = csv_split(line, h)
    for (i = 1; i <= n; i++) { COL[h[i]] = i; COLNAME[i] = h[i] }
    NCOL = n; HAVE_HDR = 1
    return 0
  }
  NF_ = csv_split(line, F)
  return 1
}

# v(name): the field of the current row in column `name` ("" when absent).
function v(name) { return (name in COL) ? F[COL[name]] : "" }

# Label of a row's workload: a trace's file name without directory and .gz (the
# extension that stays keeps a trace apart from a generator of the same name:
# leaky_losses.pickle, leaky_losses.rmm.csv, leaky_losses), else the workload spec as
# written in the CSV. Timeline files are named timeline-LABEL.csv.
function workload_label(w, trace,    b) {
  if (trace == "") return w
  b = trace
  sub(/.*\//, "", b)
  sub(/\.gz$/, "", b)
  return b
}

# A trace label up to its first dot (gpt_train.pickle -> gpt_train): older bench folders
# named trace timelines so. Returns "" for a label without a dot.
function label_short(l) { return index(l, ".") > 1 ? substr(l, 1, index(l, ".") - 1) : "" }

# Label of a row's strategy: allocator, plus ":params" when params are given.
function strategy_label(alloc, params) {
  return params == "" ? alloc : alloc ":" params
}

# Choose a byte unit for values up to maxb: GiB, MiB or KiB.
function unit_for(maxb) {
  if (maxb >= 1073741824) return "GiB"
  if (maxb >= 1048576) return "MiB"
  return "KiB"
}
function unit_div(u) { return u == "GiB" ? 1073741824 : (u == "MiB" ? 1048576 : 1024) }

# Human-readable bytes: "9.12 GiB", "380.5 MiB", "512 B".
function fmt_bytes(b) {
  if (b == "") return ""
  b += 0
  if (b >= 1073741824) return sprintf("%.2f GiB", b / 1073741824)
  if (b >= 1048576) return sprintf("%.1f MiB", b / 1048576)
  if (b >= 1024) return sprintf("%.1f KiB", b / 1024)
  return sprintf("%.0f B", b)
}

# A status that ran to the end of the workload with figures worth comparing.
function status_ok(s) { return s == "ok" }
