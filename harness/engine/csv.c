/* csv.c - the results CSV writer; see csv.h. A figure that does not apply is empty. */
#include "csv.h"
#include <math.h>
#include <string.h>

const char *const csv_columns[] = {
  "run_id", "version", "workload", "trace", "allocator", "params", "device", "device_name", "cap_bytes", "cap_x", "seed",
  "status", "completed", "events", "allocs", "frees", "skipped_events", "oom_count", "first_oom_event",
  "peak_requested", "peak_allocated", "peak_reserved", "overhead", "frag", "ext_frag", "internal_frag",
  "trace_peak_reserved", "device_allocs", "device_frees", "maps", "unmaps", "cache_flushes",
  "modeled_driver_ns", "wall_ns", "ns_per_op", "p50_ns", "p99_ns", "max_ns", "leak_bytes_per_iter",
  "mincap_bytes", "mincap_x", "imbalance", "alloc_conf",
  "cap_source", "cap_lo", "cap_hi", "ns_per_op_includes",
  "model_err", NULL,
};

/* The header is the first line, so that any CSV reader (pandas.read_csv, csv.DictReader)
 * takes the file without options; the format's version is the `version` column. Files
 * of fragbench 0.1.0 began with a "# fragbench results v1" line; results_read.c still
 * reads them. */
void csv_write_header(FILE *f) {
  for (int i = 0; csv_columns[i]; i++) fprintf(f, "%s%s", i ? "," : "", csv_columns[i]);
  fputc('\n', f);
}

void csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n")) { fputs(s, f); return; }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void u64(FILE *f, uint64_t v) { fprintf(f, ",%llu", (unsigned long long)v); }
static void u64_opt(FILE *f, uint64_t v) { if (v) u64(f, v); else fputc(',', f); }
static void dbl(FILE *f, double v, const char *fmt) {
  fputc(',', f);
  if (!isnan(v)) fprintf(f, fmt, v);
}
static void str(FILE *f, const char *s) { fputc(',', f); csv_field(f, s); }

void csv_write_row(FILE *f, const char *run_id, const struct run_result *r) {
  int ran = !strncmp(r->status, "ok", 2) || !strncmp(r->status, "oom", 3);
  csv_field(f, run_id);
  str(f, FB_VERSION);
  str(f, r->workload);
  str(f, r->trace);
  str(f, r->allocator);
  str(f, r->params);
  str(f, r->device);
  str(f, r->device_name);
  u64_opt(f, r->cap_bytes);
  dbl(f, r->cap_x > 0 ? r->cap_x : NAN, "%.4g");
  u64(f, r->seed);
  str(f, r->status);
  fprintf(f, ",%d", r->completed);
  if (!ran) {   /* skipped or failed before replay: counts and figures do not apply */
    for (int i = 13; csv_columns[i]; i++) {
      if (!strcmp(csv_columns[i], "mincap_bytes")) { u64_opt(f, r->mincap_bytes); continue; }
      if (!strcmp(csv_columns[i], "trace_peak_reserved")) { u64_opt(f, r->trace_peak_reserved); continue; }
      if (!strcmp(csv_columns[i], "alloc_conf")) { str(f, r->alloc_conf); continue; }
      if (!strcmp(csv_columns[i], "cap_source")) { str(f, r->cap_source); continue; }
      if (!strcmp(csv_columns[i], "cap_lo")) { u64_opt(f, r->cap_lo); continue; }
      if (!strcmp(csv_columns[i], "cap_hi")) { u64_opt(f, r->cap_hi); continue; }
      if (!strcmp(csv_columns[i], "ns_per_op_includes")) { str(f, r->ns_per_op_includes); continue; }
      if (!strcmp(csv_columns[i], "model_err")) { fputc(',', f); continue; }
      fputc(',', f);
    }
    fputc('\n', f);
    return;
  }
  u64(f, r->events);
  u64(f, r->allocs);
  u64(f, r->frees);
  u64(f, r->skipped_events);
  u64(f, r->oom_count);
  if (r->first_oom_event >= 0) fprintf(f, ",%lld", (long long)r->first_oom_event); else fputc(',', f);
  u64(f, r->peak_requested);
  u64(f, r->peak_allocated);
  u64(f, r->peak_reserved);
  dbl(f, r->overhead, "%.6f");
  dbl(f, r->frag, "%.6f");
  dbl(f, r->ext_frag, "%.6f");
  u64(f, r->internal_frag);
  u64_opt(f, r->trace_peak_reserved);
  u64(f, r->device_allocs);
  u64(f, r->device_frees);
  u64(f, r->maps);
  u64(f, r->unmaps);
  u64(f, r->cache_flushes);
  u64(f, r->modeled_driver_ns);
  u64(f, r->wall_ns);
  dbl(f, r->ns_per_op, "%.1f");
  if (r->timed_samples) { u64(f, r->p50_ns); u64(f, r->p99_ns); u64(f, r->max_ns); }
  else fputs(",,,", f);
  dbl(f, r->leak_bytes_per_iter, "%.1f");
  u64_opt(f, r->mincap_bytes);
  dbl(f, r->mincap_x, "%.4f");
  dbl(f, r->imbalance, "%.4f");
  str(f, r->alloc_conf);
  str(f, r->cap_source);
  u64_opt(f, r->cap_lo);
  u64_opt(f, r->cap_hi);
  str(f, r->ns_per_op_includes);   /* "validate": the mean includes --validate's checks (p50/p99/max do not) */
  dbl(f, r->model_err, "%.4g");    /* peak_reserved is the model's figure within +/- this fraction; 0 = exact or measured */
  fputc('\n', f);
}
