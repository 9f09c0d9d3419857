/* cli_output.c - where rows go: the CSV (stdout or --out; flushed row by row) and a
 * human-readable table on stderr. */
#include "cli.h"
#include <math.h>
#include <string.h>

int output_open(struct output *out, const char *path) {
  memset(out, 0, sizeof *out);
  if (path && strcmp(path, "-")) {
    out->csv = fopen(path, "w");
    if (!out->csv) { fprintf(stderr, "fragbench: %s: cannot write\n", path); return -1; }
    out->close_csv = 1;
  } else {
    out->csv = stdout;
  }
  csv_write_header(out->csv);
  fflush(out->csv);
  return 0;
}

void table_header(void) {
  fprintf(stderr, "%-30s %-12s %-10s %-8s %12s %12s %9s %9s %9s  %s\n", "workload", "allocator", "cap", "status",
          "peak_req", "peak_res", "overhead", "ext_frag", "ns/op", "settings");
}

static const char *short_bytes(uint64_t b, char *buf, size_t n) {
  if (!b) { snprintf(buf, n, "-"); return buf; }
  return fmt_bytes(b, buf, n);
}

void table_row(const struct run_result *r) {
  char a[32], b[32], c[32], st[16];
  snprintf(st, sizeof st, "%.8s", r->status);
  char *colon = strchr(st, ':');
  if (colon) *colon = 0;
  fprintf(stderr, "%-30s %-12.12s %-10s %-8s %12s %12s ", r->workload, r->allocator, short_bytes(r->cap_bytes, c, sizeof c),
          st, short_bytes(r->peak_requested, a, sizeof a), short_bytes(r->peak_reserved, b, sizeof b));
  if (isnan(r->overhead)) fprintf(stderr, "%9s ", "-"); else fprintf(stderr, "%9.3f ", r->overhead);
  if (isnan(r->ext_frag)) fprintf(stderr, "%9s ", "-"); else fprintf(stderr, "%9.3f ", r->ext_frag);
  if (isnan(r->ns_per_op)) fprintf(stderr, "%9s", "-"); else fprintf(stderr, "%9.1f", r->ns_per_op);
  /* the effective settings, and where they came from: a `recorded` row adopts the snapshot's */
  fprintf(stderr, "  %s%s\n", r->params[0] ? r->params : "defaults",
          r->params_from_trace ? " (from the snapshot)" : "");
}

void output_row(struct output *out, const struct run_result *r) {
  char id[32];
  snprintf(id, sizeof id, "%d", ++out->rows);
  csv_write_row(out->csv, id, r);
  fflush(out->csv);
  if (out->quiet) return;
  if (out->rows == 1) table_header();
  table_row(r);
}

void output_close(struct output *out) {
  if (out->close_csv) fclose(out->csv);
  out->csv = NULL;
}
