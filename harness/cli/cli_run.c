/* cli_run.c - `fragbench run`: every source (workload or device trace) x allocator x cap
 * is one row, replayed on one device; rows go to the CSV as they finish, so an error in
 * a later row loses nothing already measured. */
#include "cli.h"
#include "multi.h"
#include "timeline.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_pick_device(struct cli_opts *o, struct device_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->sim_total = o->sim_total;
  cfg->sim_usable = o->sim_usable;
  char err[FB_ERRLEN];
  if (!strcmp(o->device, "sim")) { cfg->kind = "sim"; return 0; }
  int n = cuda_device_count(err);
  if (!strcmp(o->device, "cuda")) {
    if (n <= 0) {
      fprintf(stderr, "fragbench: --device cuda: no usable GPU: %s\n", n == 0 ? "no CUDA device visible" : err);
      return 1;
    }
    cfg->kind = "cuda";
    return 0;
  }
  if (n > 0) {
    cfg->kind = "cuda";
    if (!o->quiet) fprintf(stderr, "fragbench: device auto: using cuda (%d GPU%s visible)\n", n, n > 1 ? "s" : "");
  } else {
    cfg->kind = "sim";
    if (!o->quiet) fprintf(stderr, "fragbench: device auto: no GPU (%s); using the simulated device\n", n == 0 ? "no CUDA device visible" : err);
  }
  return 0;
}

/* Every --workload and --allocator names something known, with known keys and values
 * of the right type: checked before any row runs, so bad usage costs no output. */
int cli_check_selection(const struct cli_opts *o) {
  char name[64], err[FB_ERRLEN];
  struct params p;
  for (int i = 0; i < o->nworkloads; i++) {
    if (params_parse_spec(o->workloads[i], name, sizeof name, &p, err)) { fprintf(stderr, "fragbench: --workload %s\n", err); return 2; }
    const struct workload_ops *w = workload_find(name);
    if (!w) {
      fprintf(stderr, "fragbench: unknown workload '%s'; known:", name);
      for (int k = 0; workload_table[k]; k++) if (!workload_table[k]->is_trace) fprintf(stderr, " %s", workload_table[k]->name);
      fprintf(stderr, "\n");
      return 2;
    }
    p.percent_base = SIM_TOTAL_DEFAULT;
    if (params_check(&p, w->params, w->name, err)) { fprintf(stderr, "fragbench: %s\n", err); return 2; }
  }
  for (int i = 0; i < o->nallocators; i++) {
    if (params_parse_spec(o->allocators[i], name, sizeof name, &p, err)) { fprintf(stderr, "fragbench: --allocator %s\n", err); return 2; }
    if (!strcmp(name, "recorded")) continue;   /* resolved per trace */
    const struct allocator_ops *a = allocator_find(name);
    if (!a) {
      fprintf(stderr, "fragbench: unknown allocator '%s'; known:", name);
      for (int k = 0; allocator_table[k]; k++) fprintf(stderr, " %s", allocator_table[k]->name);
      fprintf(stderr, " recorded\n");
      return 2;
    }
    p.percent_base = SIM_TOTAL_DEFAULT;
    if (params_check(&p, a->params, a->name, err)) { fprintf(stderr, "fragbench: %s\n", err); return 2; }
  }
  return 0;
}

int cli_sources(const struct cli_opts *o, struct source *out, int max, int *n) {
  *n = 0;
  if (cli_check_selection(o)) return 2;
  for (int i = 0; i < o->nworkloads && *n < max; i++)
    out[(*n)++] = (struct source){.workload = o->workloads[i], .trace_device = -1};
  for (int i = 0; i < o->ntraces; i++) {
    if (o->trace_device >= 0) {
      if (*n < max) out[(*n)++] = (struct source){.trace = o->traces[i], .trace_device = o->trace_device};
      continue;
    }
    /* every device trace with events: ask the reader */
    char err[FB_ERRLEN];
    const struct workload_ops *ops = trace_detect(o->traces[i], err);
    struct workload w;
    struct workload_ctx ctx = {.world = 1, .path = o->traces[i], .trace_device = -1};
    if (!ops || workload_open(&w, ops, NULL, &ctx, SIM_TOTAL_DEFAULT, err)) {
      fprintf(stderr, "fragbench: %s\n", err);
      return 2;
    }
    struct workload_info info;
    memset(&info, 0, sizeof info);
    if (ops->info) ops->info(w.st, &info);
    workload_close(&w);
    int any = 0;
    for (int d = 0; d < 64; d++)
      if (info.device_mask >> d & 1) {
        if (*n < max) out[(*n)++] = (struct source){.trace = o->traces[i], .trace_device = any || d ? d : -1};
        any = 1;
      }
    if (!any && *n < max) out[(*n)++] = (struct source){.trace = o->traces[i], .trace_device = -1};
  }
  return 0;
}

void cli_spec(const struct cli_opts *o, const struct device_config *cfg, const struct source *src, struct run_spec *s) {
  memset(s, 0, sizeof *s);
  s->workload = src->workload;
  s->trace = src->trace;
  s->trace_device = src->trace_device;
  s->world = 1;
  s->seed = o->seed;
  s->device = *cfg;
  s->on_oom = o->on_oom;
  s->validate = o->validate;
  s->strict = o->strict;
  s->verify = o->verify;
  s->touch = o->touch;
  s->no_touch = o->no_touch;
  s->fail_rate = o->fail_rate;
  s->quiet = o->quiet;
  s->progress = !o->quiet && isatty(2);
}

static uint64_t device_total(const struct device_config *cfg) {
  if (!strcmp(cfg->kind, "sim")) return cfg->sim_total ? cfg->sim_total : SIM_TOTAL_DEFAULT;
  struct device d;
  char err[FB_ERRLEN];
  if (device_open(&d, cfg, err)) return 0;
  uint64_t t = d.total;
  device_close(&d);
  return t;
}

int cmd_run(struct cli_opts *o) {
  if (!o->nworkloads && !o->ntraces) {
    fprintf(stderr, "fragbench run: nothing to replay: give --workload NAME or --trace FILE (see fragbench list)\n");
    return 2;
  }
  static const char *default_alloc[] = {"raw"};
  const char **allocs = o->nallocators ? o->allocators : default_alloc;
  int nalloc = o->nallocators ? o->nallocators : 1;
  if (cli_check_selection(o)) return 2;
  struct device_config cfg;
  if (cli_pick_device(o, &cfg)) return 1;
  if (mpi_world() > 1) return cmd_run_mpi(o, &cfg);
  if (o->devices) return cmd_run_multi(o, &cfg);
  struct source src[CLI_MAX * 4];
  int nsrc;
  if (cli_sources(o, src, CLI_MAX * 4, &nsrc)) return 2;
  uint64_t total = device_total(&cfg);

  struct output out;
  if (output_open(&out, o->out)) return 2;
  out.quiet = o->quiet;
  FILE *tl = NULL;
  if (o->timeline) {
    tl = fopen(o->timeline, "w");
    if (!tl) { fprintf(stderr, "fragbench: %s: cannot write the timeline\n", o->timeline); output_close(&out); return 2; }
    fputs(TIMELINE_HEADER, tl);
  }
  int worst = 0;
  for (int si = 0; si < nsrc && worst < 2; si++) {
    struct run_spec s;
    cli_spec(o, &cfg, &src[si], &s);
    uint64_t peak_req = 0;
    for (int c = 0; c < o->ncaps; c++)
      if (o->caps[c].kind == CAP_X && !peak_req) {
        char err[FB_ERRLEN];
        if (workload_peak_requested(&s, &peak_req, err)) { fprintf(stderr, "fragbench: %s\n", err); worst = 2; break; }
      }
    if (worst) break;
    for (int ai = 0; ai < nalloc && worst < 2; ai++) {
      int ncap = o->ncaps ? o->ncaps : 1;
      for (int c = 0; c < ncap; c++) {
        s.allocator = allocs[ai];
        s.cap_bytes = 0;
        s.cap_x = 0;
        if (o->ncaps) {
          const struct cap *cp = &o->caps[c];
          if (cp->kind == CAP_FRACTION) s.cap_bytes = (uint64_t)(cp->value * (double)total);
          else if (cp->kind == CAP_BYTES) s.cap_bytes = cp->bytes;
          else { s.cap_x = cp->value; s.cap_bytes = (uint64_t)ceil(cp->value * (double)peak_req); }
        }
        s.timeline = tl;   /* rows named as the results CSV names the strategy ("recorded" resolved) */
        s.timeline_label = nsrc > 1 ? (src[si].workload ? src[si].workload : src[si].trace) : NULL;
        struct run_result r;
        run_result_init(&r);
        int cls = replay_run(&s, &r);
        if (cls == 2 && !r.allocator[0] && !r.workload[0]) {
          fprintf(stderr, "fragbench: %s\n", r.status + 7);
          worst = 2;
          break;
        }
        output_row(&out, &r);
        if (cls) fprintf(stderr, "fragbench: %s x %s: %s\n", r.workload, r.allocator[0] ? r.allocator : allocs[ai], r.status);
        if (cls > worst) worst = cls;
        if (cls == 2) break;
      }
    }
  }
  if (tl) fclose(tl);
  output_close(&out);
  return worst;
}
