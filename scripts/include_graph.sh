#!/bin/sh
# include_graph.sh - the include graph between the tree's concept folders, and the rule
# it must keep: arrows only downward, cli -> report -> engine -> allocators -> workloads -> device
# -> common (tests/, fuzz targets and scripts are outside the graph).
#   sh scripts/include_graph.sh           folder edges "from -> to (N includes)", then
#                                         "ok" or one line per upward arrow; exit 1 if any
#   sh scripts/include_graph.sh --dot     the same graph in Graphviz dot (dot -Tpng > g.png)
#   ROOT=DIR                              another checkout (e.g. an old commit's worktree)
# Includes are by file name (every folder is on the compiler's path), so a name is
# resolved to the folder that holds the file; relative includes are resolved as paths.
ROOT=${ROOT:-.}
mode=${1:-check}
cd "$ROOT" || exit 2
order="harness/cli harness/report harness/engine allocators workloads harness/device harness/common"
# Old flat layouts (before the folder split) are drawn as they were: harness is one node.
# One awk over every file (a process per include made this take 2.7 s): a name is the first
# file, in sorted order, whose path ends in /name; a path with a folder is resolved from
# the including file's folder (and must exist).
find harness allocators workloads -name '*.[ch]' 2>/dev/null | sort | awk '
  function norm(path,   n, i, k, part, out) {
    n = split(path, part, "/"); k = 0
    for (i = 1; i <= n; i++) {
      if (part[i] == "" || part[i] == ".") continue
      if (part[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
      out[++k] = part[i]
    }
    path = ""; for (i = 1; i <= k; i++) path = path (i > 1 ? "/" : "") out[i]
    return path
  }
  function dirname(path) { return sub(/\/[^\/]*$/, "", path) ? path : "." }
  { files[++nf] = $0; base = $0; sub(/.*\//, "", base); if (!(base in home)) home[base] = dirname($0) }
  END {
    for (i = 1; i <= nf; i++) {
      f = files[i]; dir = dirname(f)
      while ((getline line < f) > 0) {
        if (line !~ /^#include "[^"]*"/) continue
        inc = line; sub(/^#include "/, "", inc); sub(/".*/, "", inc)
        if (inc ~ /\//) {
          target = norm(dir "/" dirname(inc))
          if (system("test -d \"" target "\"")) continue
        } else if (inc in home) target = home[inc]
        else continue
        print dir, target
      }
      close(f)
    }
  }' | sort | uniq -c | awk -v mode="$mode" -v order="$order" '
  $2 != $3 { e = $2 " " $3; n[e] = $1; keys[++nk] = e }
  END {
    k = split(order, o, " "); for (i = 1; i <= k; i++) lvl[o[i]] = k - i + 1
    if (mode == "--dot") {
      print "digraph includes {\n  rankdir=TB; node [shape=box, fontname=\"Helvetica\"];"
      for (j = 1; j <= nk; j++) { e = keys[j]; split(e, p, " "); up = (p[1] in lvl && p[2] in lvl && lvl[p[2]] >= lvl[p[1]]) || !(p[1] in lvl) || !(p[2] in lvl)
        printf "  \"%s\" -> \"%s\" [label=%d%s];\n", p[1], p[2], n[e], up ? ", color=red, fontcolor=red" : "" }
      print "}"; exit 0
    }
    bad = 0
    for (j = 1; j <= nk; j++) { e = keys[j]; split(e, p, " "); printf "%s -> %s (%d includes)\n", p[1], p[2], n[e]
      if (!(p[1] in lvl) || !(p[2] in lvl)) { printf "  not a concept folder: %s\n", !(p[1] in lvl) ? p[1] : p[2]; bad++ }
      else if (lvl[p[2]] >= lvl[p[1]]) { printf "  UPWARD: %s is not below %s\n", p[2], p[1]; bad++ } }
    if (bad) { printf "%d arrow(s) break the order: %s\n", bad, order; exit 1 }
    print "ok: every arrow points down (" order ")"
  }'
