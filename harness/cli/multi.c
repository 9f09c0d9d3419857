/* multi.c - --devices: a thread per device, each with its own workload rank (or trace)
 * and allocator instance; see multi.h. Threads share nothing but the results array. */
#include "multi.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int device_list_parse(const char *text, const struct device_config *base, struct device_list *out) {
  memset(out, 0, sizeof *out);
  char err[FB_ERRLEN];
  if (!strncmp(text, "sim:", 4)) {
    uint64_t n;
    if (parse_u64(text + 4, &n) || n < 1 || n > 64) {
      fprintf(stderr, "fragbench: --devices '%s': expected sim:N with N in 1..64\n", text);
      return 2;
    }
    for (int i = 0; i < (int)n; i++) {
      out->cfg[i] = *base;
      out->cfg[i].kind = "sim";
      out->cfg[i].index = i;
    }
    out->n = (int)n;
    return 0;
  }
  int avail = strcmp(base->kind, "cuda") ? 64 : cuda_device_count(err);
  if (!strcmp(text, "all")) {
    if (!strcmp(base->kind, "sim")) {
      fprintf(stderr, "fragbench: --devices all: on the simulated device say how many: sim:N\n");
      return 2;
    }
    if (avail <= 0) { fprintf(stderr, "fragbench: --devices all: no GPU: %s\n", err); return 1; }
    for (int i = 0; i < avail && i < 64; i++) { out->cfg[i] = *base; out->cfg[i].index = i; }
    out->n = avail < 64 ? avail : 64;
    return 0;
  }
  char buf[512];
  snprintf(buf, sizeof buf, "%s", text);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    uint64_t idx;
    if (parse_u64(tok, &idx) || idx > 63 || out->n >= 64) {
      fprintf(stderr, "fragbench: --devices '%s': expected a list of device indices such as 0,1, or all, or sim:N\n", text);
      return 2;
    }
    if ((int)idx >= avail) {
      fprintf(stderr, "fragbench: --devices %s: device %llu does not exist (%d visible)\n", text, (unsigned long long)idx, avail);
      return 1;
    }
    for (int k = 0; k < out->n; k++)
      if (out->cfg[k].index == (int)idx) {
        fprintf(stderr, "fragbench: --devices '%s': device %llu named twice (it would count twice in the aggregate)\n", text,
                (unsigned long long)idx);
        return 2;
      }
    out->cfg[out->n] = *base;
    out->cfg[out->n].index = (int)idx;
    out->n++;
  }
  return out->n ? 0 : 2;
}

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

#ifndef FB_HAVE_MPI
int mpi_start(int *argc, char ***argv) { (void)argc; (void)argv; return 1; }
void mpi_stop(void) {}
int mpi_world(void) { return 1; }
int cmd_run_mpi(struct cli_opts *o, const struct device_config *base) { (void)o; (void)base; return 2; }
#endif

struct job { struct run_spec spec; struct run_result res; pthread_t th; };

static void *job_main(void *p) {
  struct job *j = p;
  run_result_init(&j->res);
  replay_run(&j->spec, &j->res);
  return NULL;
}

int cmd_run_multi(struct cli_opts *o, const struct device_config *base) {
  struct device_list dl;
  int rc = device_list_parse(o->devices, base, &dl);
  if (rc) return rc;
  /* groups: each workload on every device (rank i of n); the traces together (trace i,
   * or device trace i of one multi-device snapshot, on device i) */
  static const char *default_alloc[] = {"raw"};
  const char **allocs = o->nallocators ? o->allocators : default_alloc;
  int nalloc = o->nallocators ? o->nallocators : 1;
  int ngroups = o->nworkloads + (o->ntraces ? 1 : 0);
  if (!ngroups) { fprintf(stderr, "fragbench run: nothing to replay: give --workload NAME or --trace FILE\n"); return 2; }
  if (o->ncaps) {
    for (int c = 0; c < o->ncaps; c++)
      if (o->caps[c].kind == CAP_X) { fprintf(stderr, "fragbench run: --cap-x with --devices is not supported; use --cap or --cap-bytes\n"); return 2; }
  }
  struct output out;
  if (output_open(&out, o->out)) return 2;
  out.quiet = o->quiet;
  output_gate(&out, o);
  struct job *jobs = calloc((size_t)dl.n, sizeof *jobs);
  struct run_result *rows = calloc((size_t)dl.n, sizeof *rows);
  int worst = 0;
  for (int g = 0; g < ngroups && worst < 2; g++) {
    for (int ai = 0; ai < nalloc && worst < 2; ai++) {
      int ncap = o->ncaps ? o->ncaps : 1;
      for (int c = 0; c < ncap && worst < 2; c++) {
        for (int i = 0; i < dl.n; i++) {
          struct source src = {.trace_device = -1};
          if (g < o->nworkloads) src.workload = o->workloads[g];
          else if (o->ntraces > 1) src.trace = o->traces[i % o->ntraces];
          else { src.trace = o->traces[0]; src.trace_device = i; }
          cli_spec(o, &dl.cfg[i], &src, &jobs[i].spec);
          jobs[i].spec.rank = i;
          jobs[i].spec.world = dl.n;
          jobs[i].spec.seed = o->seed + (uint64_t)i * 1000003u;   /* per-rank seeds */
          jobs[i].spec.allocator = allocs[ai];
          jobs[i].spec.progress = 0;
          jobs[i].spec.cap_bytes = 0;
          if (o->ncaps) {
            const struct cap *cp = &o->caps[c];
            if (cp->kind == CAP_BYTES) jobs[i].spec.cap_bytes = cp->bytes;
            else {
              uint64_t total = dl.cfg[i].sim_total ? dl.cfg[i].sim_total : SIM_TOTAL_DEFAULT;
              if (!strcmp(dl.cfg[i].kind, "cuda")) {
                struct device d; char err[FB_ERRLEN];
                if (!device_open(&d, &dl.cfg[i], err)) { total = d.total; device_close(&d); }
              }
              jobs[i].spec.cap_bytes = (uint64_t)(cp->value * (double)total);
            }
          }
        }
        for (int i = 0; i < dl.n; i++) pthread_create(&jobs[i].th, NULL, job_main, &jobs[i]);
        for (int i = 0; i < dl.n; i++) pthread_join(jobs[i].th, NULL);
        for (int i = 0; i < dl.n; i++) {
          rows[i] = jobs[i].res;
          output_row(&out, &rows[i]);
          if (rows[i].exit_class) fprintf(stderr, "fragbench: device %d: %s x %s: %s\n", i, rows[i].workload, allocs[ai], rows[i].status);
          if (rows[i].exit_class > worst) worst = rows[i].exit_class;
        }
        struct run_result agg;
        aggregate_rows(rows, dl.n, &agg);
        output_row(&out, &agg);
      }
    }
  }
  free(jobs);
  free(rows);
  output_close(&out);
  if (out.gate_failed && worst < 1) worst = 1;
  return worst;
}
