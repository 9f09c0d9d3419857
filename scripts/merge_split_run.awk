# merge_split_run.awk - make bench on a GPU host takes its uncapped rows in two runs (async's
# first, alone on the GPU, so that its GPU searches can start from them; then the other
# strategies', while those searches go on): this puts the two runs' rows back in the order
# one run of every strategy writes them - the sources in the order given, and for each
# source its strategies in the order given. For runs.csv (a row a strategy: run_id
# renumbered), for the timeline (a group of rows a strategy: the rows of one
# "SOURCE/allocator" and settings in a row) and for the table on stderr (a line a
# strategy, its first word the source's label; the lines before the header go first, each
# once).
#   awk -v mode=runs|timeline|table -v order="1 1 2 1" -f csv_split.awk -f merge_split_run.awk SOURCES FIRST SECOND
# SOURCES: "LABEL FLAG SOURCE" lines, in order; order: for each strategy given, in order,
# 1 when its rows are FIRST's, 2 when SECOND's. Rows of a source not in SOURCES, and rows
# left over where a run wrote fewer or more than one a strategy, go after the others of
# their source (the last: those of no source), nothing dropped.
BEGIN { nk = split(order, K, " "); other = "\001" }
FNR == NR { nsrc++; lab[nsrc] = $1; known[$1] = 1; label_of[$3] = $1; next }
FNR == 1 { fi = FILENAME == ARGV[2] ? 1 : 2; inhdr = 1; last_group = "" }
mode == "table" && inhdr && !/^workload / { if (!(($0) in said)) { said[$0] = 1; before[++nbefore] = $0 } next }
mode == "table" && inhdr { inhdr = 0; if (header == "") header = $0; next }
inhdr && /^#/ { if (comment == "") comment = $0; next }
inhdr {
  inhdr = 0
  if (header == "") header = $0
  if (mode == "runs") { n = splitcsv($0, h); wcol = 0; for (i = 1; i <= n; i++) if (h[i] == "workload") wcol = i }
  next
}
{
  if (mode == "table") {  # a line a group; its source its first word
    key = $1
    new_group = 1
  } else if (mode == "runs") {   # a row a group; its source by the workload column (the source's label)
    n = splitcsv($0, f)
    key = wcol ? f[wcol] : other
    new_group = 1
  } else {                # a group: the rows of one first field ("SOURCE/allocator") and last (the settings) in a row
    if (match($0, /^"([^"]|"")*"/) || match($0, /^[^,]*/)) first = substr($0, 1, RLENGTH)
    lastf = match($0, /,"([^"]|"")*"$/) || match($0, /,[^,]*$/) ? substr($0, RSTART) : ""
    unq = first
    if (unq ~ /^"/) { unq = substr(unq, 2, length(unq) - 2); gsub(/""/, "\"", unq) }
    src = match(unq, /\/[^\/]*$/) ? substr(unq, 1, RSTART - 1) : unq
    key = (src in label_of) ? label_of[src] : other
    g = first SUBSEP lastf
    new_group = g != last_group
    last_group = g
  }
  if (!(key in known)) key = other
  if (new_group) ng[fi, key]++
  rows[fi, key, ng[fi, key]] = rows[fi, key, ng[fi, key]] $0 "\n"
}
function emit(text,   m, L, i) {
  if (mode != "runs") { printf "%s", text; return }
  m = split(text, L, "\n")
  for (i = 1; i < m; i++) { sub(/^[^,]*/, ++rid, L[i]); print L[i] }
}
END {
  for (i = 1; i <= nbefore; i++) print before[i]
  if (comment != "") print comment
  if (header != "") print header
  for (s = 1; s <= nsrc + 1; s++) {
    key = s <= nsrc ? lab[s] : other
    used[1] = 0; used[2] = 0
    for (k = 1; k <= nk; k++) { w = K[k] + 0; if (used[w] < ng[w, key]) emit(rows[w, key, ++used[w]]) }
    for (w = 1; w <= 2; w++) while (used[w] < ng[w, key]) emit(rows[w, key, ++used[w]])
  }
}
