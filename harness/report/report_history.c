/* report_history.c - report.md's "Peak reserved across runs": DIR/history.md as
 * `fragbench history` wrote it (plots/report.sh runs it when earlier bench runs are in
 * results/; its pictures are in DIR/plots/), copied in as it is. No history.md: nothing. */
#include "report.h"
#include <stdio.h>

void report_history(const struct run_folder *f, FILE *out) {
  char path[1100], buf[4096];
  snprintf(path, sizeof path, "%s/history.md", f->dir);
  FILE *h = fopen(path, "r");
  if (!h) return;
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, h)) > 0) fwrite(buf, 1, n, out);
  fclose(h);
  fputc('\n', out);
}
