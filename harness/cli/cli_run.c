/* cli_run.c - `fragbench run`: every source (workload or device trace) x allocator x cap
 * is one row, replayed on one device; rows go to the CSV as they finish, so an error in
 * a later row loses nothing already measured. */
#include "cli.h"
#include "options.h"
#include "stream_acct.h"
#include "multi.h"
#include "timeline.h"
#include "cap_infer.h"
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

static const struct opt_def run_opts[] = {
  OPTS_SELECTION,
  OPTS_STRATEGY,
  OPTS_DEVICE,
  {"--devices", OPT_LIST, "LIST", "0,1 | all | sim:N: one device each (thread per device), one row each + device=all"},
  {"--cap", OPT_LIST, "F[,F...]", "cap reserved memory at fraction F of the device total (one row per cap)"},
  {"--cap-x", OPT_LIST, "M[,M...]", "... at M times the input's own peak requested"},
  OPTS_LIMIT,
  {"--on-oom", OPT_TEXT, "stop|skip", "stop the row at the first OOM (default) or skip that request"},
  OPTS_CHECKS,
  {"--touch", OPT_SWITCH, NULL, "cuda: write every block once after allocation (cudaMemsetAsync)"},
  {"--no-touch", OPT_SWITCH, NULL, "cuda: no write at all, not even async's default one"},
  {"--verify", OPT_SWITCH, NULL, "cuda: write a pattern at allocation and check it at free"},
  {"--out", OPT_TEXT, "FILE.csv", "write the CSV there (default: stdout); written whole or not at all"},
  {"--timeline", OPT_TEXT, "FILE.csv", "requested/allocated/reserved over the run, per row"},
  {"--breakdown", OPT_TEXT, "FILE.csv", "peak reserved split by stream, one line per row and stream"},
  OPTS_QUIET,
  {"--max-reserved", OPT_BYTES, "BYTES", "a gate for CI: exit 1 when a row's peak reserved exceeds BYTES"},
  {"--fail-on-oom", OPT_SWITCH, NULL, "a gate for CI: exit 1 when a row runs out of memory under its cap"},
  OPTS_END,
};

const struct cmd_def cmd_run_def = {
  "run", "[selection] [options]   replay, one CSV row per input x strategy x cap x device",
  "Replays every input (--workload, --trace; each device trace of a snapshot) under every\n"
  "strategy (--allocator, --alloc-conf) and every cap, one results CSV row each. With no\n"
  "cap given, a snapshot that ended in an OOM replays under the limit it ran under, inferred\n"
  "from it (columns cap_source, cap_lo, cap_hi); --no-infer-cap turns that off.\n",
  run_opts, cmd_run,
  "exit status: 0 every row ran (OOM and skipped rows included); 1 a validator failure, a\n"
  "device error, or a row that failed --max-reserved/--fail-on-oom; 2 bad usage or bad input.\n",
};

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
  if (o->breakdown && (o->devices || mpi_world() > 1)) {
    fprintf(stderr, "fragbench run: --breakdown splits one device's rows; it does not work with --devices or MPI yet\n");
    return 2;
  }
  if (o->devices) return cmd_run_multi(o, &cfg);
  struct source src[CLI_MAX * 4];
  int nsrc;
  if (cli_sources(o, src, CLI_MAX * 4, &nsrc)) return 2;
  uint64_t total = device_total(&cfg);
  /* one snapshot that ended in an OOM, no cap given: replay under the limit it ran under */
  struct cap_inference ci;
  memset(&ci, 0, sizeof ci);
  if (!o->ncaps && !o->no_infer_cap && nsrc == 1 && src[0].trace) {
    char err[FB_ERRLEN], line[1024];
    if (cap_infer_trace(src[0].trace, src[0].trace_device, &ci, err)) { fprintf(stderr, "fragbench: %s\n", err); return 2; }
    if (ci.has_oom) {
      cap_infer_sentence(&ci, line, sizeof line);
      if (!o->quiet) fprintf(stderr, "fragbench: %s %s\n", src[0].trace, line);
    }
  }

  struct output out;
  if (output_open(&out, o->out)) return 2;
  out.quiet = o->quiet;
  output_gate(&out, o);
  FILE *tl = NULL;
  if (o->timeline) {
    tl = fopen(o->timeline, "w");
    if (!tl) { fprintf(stderr, "fragbench: %s: cannot write the timeline\n", o->timeline); output_close(&out); return 2; }
    fputs(TIMELINE_HEADER, tl);
  }
  FILE *bd = NULL;
  if (o->breakdown) {
    bd = fopen(o->breakdown, "w");
    if (!bd) { fprintf(stderr, "fragbench: %s: cannot write the breakdown\n", o->breakdown); if (tl) fclose(tl); output_close(&out); return 2; }
    breakdown_header(bd);
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
        s.cap_source = o->ncaps ? "given" : ci.has_oom ? "inferred" : NULL;
        s.cap_lo = ci.has_oom ? ci.lo : 0;
        s.cap_hi = ci.has_oom ? ci.hi : 0;
        if (ci.has_oom) s.cap_bytes = ci.cap;
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
        struct stream_acct acct;
        if (bd) { stream_acct_init(&acct); s.breakdown = &acct; }
        int cls = replay_run(&s, &r);
        if (bd) { breakdown_rows(bd, out.rows + 1, &r, &acct); stream_acct_free(&acct); s.breakdown = NULL; }
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
  if (bd && fclose(bd)) { fprintf(stderr, "fragbench: %s: write failed\n", o->breakdown); if (worst < 2) worst = 2; }
  output_close(&out);
  if (out.gate_failed && worst < 1) worst = 1;
  return worst;
}
