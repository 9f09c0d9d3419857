/* plan_aggregate.c - the device=all row of a group of per-device rows (plan.h). */
#include "plan.h"
#include <math.h>
#include <string.h>

void aggregate_rows(const struct run_result *rows, int n, struct run_result *agg) {
  run_result_init(agg);
  if (n <= 0) return;
  *agg = rows[0];
  snprintf(agg->device, sizeof agg->device, "all");
  agg->completed = 1;
  agg->exit_class = 0;
  uint64_t min_res = UINT64_MAX, max_res = 0, sum_req = 0, sum_res = 0;
  agg->events = agg->allocs = agg->frees = agg->skipped_events = agg->oom_count = 0;
  agg->peak_requested = agg->peak_allocated = agg->peak_reserved = agg->internal_frag = 0;
  agg->device_allocs = agg->device_frees = agg->maps = agg->unmaps = agg->cache_flushes = 0;
  agg->modeled_driver_ns = agg->wall_ns = 0;
  agg->first_oom_event = -1;
  agg->trace_peak_reserved = 0;
  double ns_sum = 0, ops = 0;
  int any_oom = 0, any_bad = 0;
  for (int i = 1; i < n; i++)   /* different traces per device: name them all */
    if (strcmp(rows[i].workload, rows[0].workload) && !strstr(agg->workload, rows[i].workload)) {
      size_t l = strlen(agg->workload);
      snprintf(agg->workload + l, sizeof agg->workload - l, "+%s", rows[i].workload);
    }
  for (int i = 0; i < n; i++) {
    const struct run_result *r = &rows[i];
    if (r->exit_class > agg->exit_class) { agg->exit_class = r->exit_class; snprintf(agg->status, sizeof agg->status, "%s", r->status); any_bad = 1; }
    if (!strncmp(r->status, "oom", 3)) any_oom = 1;
    agg->completed &= r->completed;
    agg->events += r->events; agg->allocs += r->allocs; agg->frees += r->frees;
    agg->skipped_events += r->skipped_events; agg->oom_count += r->oom_count;
    if (r->first_oom_event >= 0 && (agg->first_oom_event < 0 || r->first_oom_event < agg->first_oom_event))
      agg->first_oom_event = r->first_oom_event;
    if (r->peak_requested > agg->peak_requested) agg->peak_requested = r->peak_requested;
    if (r->peak_allocated > agg->peak_allocated) agg->peak_allocated = r->peak_allocated;
    if (r->peak_reserved > agg->peak_reserved) agg->peak_reserved = r->peak_reserved;
    if (r->internal_frag > agg->internal_frag) agg->internal_frag = r->internal_frag;
    if (r->trace_peak_reserved > agg->trace_peak_reserved) agg->trace_peak_reserved = r->trace_peak_reserved;
    sum_req += r->peak_requested;
    sum_res += r->peak_reserved;
    if (r->peak_reserved < min_res) min_res = r->peak_reserved;
    if (r->peak_reserved > max_res) max_res = r->peak_reserved;
    agg->device_allocs += r->device_allocs; agg->device_frees += r->device_frees;
    agg->maps += r->maps; agg->unmaps += r->unmaps; agg->cache_flushes += r->cache_flushes;
    agg->modeled_driver_ns += r->modeled_driver_ns;
    if (r->wall_ns > agg->wall_ns) agg->wall_ns = r->wall_ns;
    if (!isnan(r->ns_per_op)) { ns_sum += r->ns_per_op * (double)(r->allocs + r->frees); ops += (double)(r->allocs + r->frees); }
    if (r->p50_ns > agg->p50_ns) agg->p50_ns = r->p50_ns;
    if (r->p99_ns > agg->p99_ns) agg->p99_ns = r->p99_ns;
    if (r->max_ns > agg->max_ns) agg->max_ns = r->max_ns;
  }
  if (!any_bad) snprintf(agg->status, sizeof agg->status, "%s", any_oom ? "oom" : "ok");
  agg->ns_per_op = ops ? ns_sum / ops : NAN;
  agg->overhead = sum_req ? (double)sum_res / (double)sum_req : NAN;
  agg->frag = sum_res ? 1.0 - (double)sum_req / (double)sum_res : NAN;
  agg->ext_frag = NAN;
  agg->leak_bytes_per_iter = NAN;
  agg->imbalance = min_res ? (double)max_res / (double)min_res : NAN;
  /* the sums, which no single column holds, go with the params */
  char extra[160];
  snprintf(extra, sizeof extra, "%sdevices=%d;sum_peak_requested=%llu;sum_peak_reserved=%llu", rows[0].params[0] ? ";" : "", n,
           (unsigned long long)sum_req, (unsigned long long)sum_res);
  size_t l = strlen(agg->params);
  snprintf(agg->params + l, sizeof agg->params - l, "%s", extra);
}
