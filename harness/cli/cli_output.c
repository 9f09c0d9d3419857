/* cli_output.c - where rows go: the CSV (stdout, flushed row by row, or --out: a
 * temporary beside it renamed into place by output_finish, outfile.h) and a
 * human-readable table on stderr. `run` with no --out and stdout a terminal writes the
 * table only (output_open_run), saying how to get the CSV. */
#include "cli.h"
#include <math.h>
#include <string.h>
#include <unistd.h>

int output_open_run(struct output *out, const char *path, int quiet) {
  if (path || quiet || !isatty(1)) return output_open(out, path);
  memset(out, 0, sizeof *out);   /* a person at a terminal: the table, not CSV rows between its lines */
  out->terminal = 1;
  return 0;
}

int output_open(struct output *out, const char *path) {
  memset(out, 0, sizeof *out);
  if (path && strcmp(path, "-")) {
    out->csv = outfile_open(&out->file, path, "the CSV");
    if (!out->csv) return -1;
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
  char *colon = strchr(st, ':'), *semi = strchr(st, ';');
  if (semi) { semi[0] = '*'; semi[1] = 0; }   /* "ok; not modelled: ...": ok*, the note is on stderr and in the CSV */
  else if (colon) *colon = 0;
  fprintf(stderr, "%-30s %-12.12s %-10s %-8s %12s %12s ", r->workload, r->allocator, short_bytes(r->cap_bytes, c, sizeof c),
          st, short_bytes(r->peak_requested, a, sizeof a), short_bytes(r->peak_reserved, b, sizeof b));
  if (isnan(r->overhead)) fprintf(stderr, "%9s ", "-"); else fprintf(stderr, "%9.3f ", r->overhead);
  if (isnan(r->ext_frag)) fprintf(stderr, "%9s ", "-"); else fprintf(stderr, "%9.3f ", r->ext_frag);
  if (isnan(r->ns_per_op)) fprintf(stderr, "%9s", "-"); else fprintf(stderr, "%9.1f", r->ns_per_op);
  /* the effective settings, and where they came from: a `recorded` row adopts the snapshot's */
  fprintf(stderr, "  %s%s", r->params[0] ? r->params : "defaults", r->params_from_trace ? " (from the snapshot)" : "");
  /* a modelled figure is a range: say it where the eye reads the point */
  if (r->model_err > 0 && r->peak_reserved) {
    char lo[32], hi[32];
    double p = (double)r->peak_reserved, e = r->model_err, low = p * (e < 1 ? 1 - e : 0);
    if (low < (double)r->peak_requested) low = fmin((double)r->peak_requested, p);   /* never below what is asked */
    fprintf(stderr, "  [peak_res a model: %s..%s, +/-%.0f%%]", fmt_bytes((uint64_t)low, lo, sizeof lo),
            fmt_bytes((uint64_t)(p * (1 + e)), hi, sizeof hi), 100 * e);
  }
  fputc('\n', stderr);
}

void output_gate(struct output *out, const struct cli_opts *o) {
  out->max_reserved = o->max_reserved;
  out->fail_on_oom = o->fail_on_oom;
}

/* "does it still fit": said on stderr even with --quiet, as it changes the exit status */
static void gate(struct output *out, const struct run_result *r) {
  const char *w = r->trace[0] ? r->trace : r->workload;
  if (out->max_reserved && r->peak_reserved > out->max_reserved) {
    fprintf(stderr, "fragbench: gate: %s x %s (device %s): peak reserved %llu > --max-reserved %llu\n", w, r->allocator, r->device,
            (unsigned long long)r->peak_reserved, (unsigned long long)out->max_reserved);
    out->gate_failed = 1;
  }
  if (out->fail_on_oom && !strncmp(r->status, "oom", 3)) {
    fprintf(stderr, "fragbench: gate: %s x %s (device %s): out of memory (%llu failed allocations; first at event %lld) and --fail-on-oom\n",
            w, r->allocator, r->device, (unsigned long long)r->oom_count, (long long)r->first_oom_event);
    out->gate_failed = 1;
  }
}

void output_row(struct output *out, const struct run_result *r) {
  gate(out, r);
  char id[32];
  snprintf(id, sizeof id, "%d", ++out->rows);
  if (out->csv) {
    csv_write_row(out->csv, id, r);
    fflush(out->csv);
  }
  if (out->quiet) return;
  if (out->rows == 1) table_header();
  table_row(r);
}

int output_finish(struct output *out, int keep) {
  int rc = 0;
  if (out->terminal && out->rows)
    fputs("fragbench: the table only, stdout being a terminal; for the CSV give --out FILE.csv (or --out -), or pipe it: "
          "fragbench run ... | cat, or > FILE.csv\n", stderr);
  out->terminal = 0;
  if (out->close_csv) rc = outfile_finish(&out->file, keep);
  else if (out->csv) fflush(out->csv);
  out->close_csv = 0;
  out->csv = NULL;
  return rc;
}

void output_abort(struct output *out) { output_finish(out, 0); }
