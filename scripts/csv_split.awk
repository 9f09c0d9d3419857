# csv_split.awk - splitcsv(line, f): a CSV line into f[1..n] (returns n), quoted fields
# ("" for a quote) kept whole. Shared by scripts/bench.sh and scripts/bench_fit.sh, which
# put it in front of their own awk programs.
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
