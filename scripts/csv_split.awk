# csv_split.awk - splitcsv(line, f): a CSV line into f[1..n] (returns n), quoted fields
# ("" for a quote) kept whole; csvrow(line, f, col): the same for a results CSV read by
# column name. Shared by scripts/bench.sh and scripts/bench_fit.sh, which put it in front
# of their own awk programs.
function splitcsv(line, f,   n, i, c, q, cur) {
  n = 0; cur = ""; q = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (q) { if (c == "\"") { if (substr(line, i + 1, 1) == "\"") { cur = cur c; i++ } else q = 0 } else cur = cur c }
    else if (c == "\"") q = 1
    else if (c == ",") { f[++n] = cur; cur = "" }
    else cur = cur c
  }
  f[++n] = cur
  return n
}

# A line of a results CSV (each file on its own): 0 for the old "# fragbench results" first
# line and for the header, whose names it puts in col[name] = index (the file's own); else
# the row's fields into f[1..n], returning n
function csvrow(line, f, col,   n, i) {
  if (FNR == 1) { csv_header = 0; split("", col) }
  if (!csv_header && line ~ /^#/) return 0
  n = splitcsv(line, f)
  if (csv_header) return n
  for (i = 1; i <= n; i++) col[f[i]] = i
  csv_header = 1
  return 0
}
