/* results_row.c - a results CSV row back into a run_result (results_row.h). */
#include "results_row.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void text(const struct results *t, int i, const char *col, char *out, size_t len) {
  snprintf(out, len, "%s", results_get(t, i, col));
}

static double num_or_nan(const struct results *t, int i, const char *col) {
  int ok;
  double v = results_num(t, i, col, &ok);
  return ok ? v : NAN;
}

void results_row_run(const struct results *t, int i, struct run_result *r) {
  run_result_init(r);
  text(t, i, "workload", r->workload, sizeof r->workload);
  text(t, i, "trace", r->trace, sizeof r->trace);
  text(t, i, "allocator", r->allocator, sizeof r->allocator);
  text(t, i, "params", r->params, sizeof r->params);
  text(t, i, "device", r->device, sizeof r->device);
  text(t, i, "device_name", r->device_name, sizeof r->device_name);
  r->cap_bytes = results_u64(t, i, "cap_bytes", NULL);
  r->cap_x = results_num(t, i, "cap_x", NULL);
  r->seed = results_u64(t, i, "seed", NULL);
  text(t, i, "status", r->status, sizeof r->status);
  r->completed = (int)results_u64(t, i, "completed", NULL);
  r->events = results_u64(t, i, "events", NULL);
  r->allocs = results_u64(t, i, "allocs", NULL);
  r->frees = results_u64(t, i, "frees", NULL);
  r->skipped_events = results_u64(t, i, "skipped_events", NULL);
  r->oom_count = results_u64(t, i, "oom_count", NULL);
  int ok;
  uint64_t first = results_u64(t, i, "first_oom_event", &ok);
  r->first_oom_event = ok ? (int64_t)first : -1;
  r->peak_requested = results_u64(t, i, "peak_requested", NULL);
  r->peak_allocated = results_u64(t, i, "peak_allocated", NULL);
  r->peak_reserved = results_u64(t, i, "peak_reserved", NULL);
  r->overhead = num_or_nan(t, i, "overhead");
  r->frag = num_or_nan(t, i, "frag");
  r->ext_frag = num_or_nan(t, i, "ext_frag");
  r->internal_frag = results_u64(t, i, "internal_frag", NULL);
  r->trace_peak_reserved = results_u64(t, i, "trace_peak_reserved", NULL);
  r->device_allocs = results_u64(t, i, "device_allocs", NULL);
  r->device_frees = results_u64(t, i, "device_frees", NULL);
  r->maps = results_u64(t, i, "maps", NULL);
  r->unmaps = results_u64(t, i, "unmaps", NULL);
  r->cache_flushes = results_u64(t, i, "cache_flushes", NULL);
  r->modeled_driver_ns = results_u64(t, i, "modeled_driver_ns", NULL);
  r->wall_ns = results_u64(t, i, "wall_ns", NULL);
  r->ns_per_op = num_or_nan(t, i, "ns_per_op");
  r->p50_ns = results_u64(t, i, "p50_ns", &ok);
  r->timed_samples = ok;   /* the writer prints the quantiles only where calls were timed */
  r->p99_ns = results_u64(t, i, "p99_ns", NULL);
  r->max_ns = results_u64(t, i, "max_ns", NULL);
  r->leak_bytes_per_iter = num_or_nan(t, i, "leak_bytes_per_iter");
  r->mincap_bytes = results_u64(t, i, "mincap_bytes", NULL);
  r->mincap_x = num_or_nan(t, i, "mincap_x");
  r->imbalance = num_or_nan(t, i, "imbalance");
  text(t, i, "alloc_conf", r->alloc_conf, sizeof r->alloc_conf);
  text(t, i, "cap_source", r->cap_source, sizeof r->cap_source);
  r->cap_lo = results_u64(t, i, "cap_lo", NULL);
  r->cap_hi = results_u64(t, i, "cap_hi", NULL);
  text(t, i, "ns_per_op_includes", r->ns_per_op_includes, sizeof r->ns_per_op_includes);
  r->model_err = results_num(t, i, "model_err", NULL);
}
