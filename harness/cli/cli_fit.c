/* cli_fit.c - `fragbench fit`: for one generator and every strategy, the largest value
 * of a parameter (batch, seq, ...) that completes under a limit (harness/engine/fit.c),
 * one CSV row each (its option table: fit_opts): fit's columns (vary, max_value, headroom_bytes, next_value,
 * next_needs_bytes, limit_bytes, margin_bytes) then the usual results row of the run at
 * max_value; a sentence per strategy on stderr; --plot draws peak reserved against the
 * parameter per strategy with the limit (plots/fit.gp). Runs on sim unless --device
 * cuda is given: the point is to answer without a GPU. The strategies' searches, and the
 * plot's points, are tasks of the engine's pool (row_pool.h: one worker per core on sim,
 * one after another on a GPU), written in order: the output is the same on any number of
 * cores. A search's own probes run one after another: each depends on the last. */
#include "cli.h"
#include "options.h"
#include "limit.h"
#include "outfile.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fit.h"
#include "gnuplot_run.h"
#include "row_pool.h"

/* the flags it takes (flags.def) */
static const char *const fit_opts[] = {
  "--workload", "--vary", FLAGS_STRATEGY, "--limit", "--oom-message", "--trace", "--from", "--to", "--margin",
  FLAGS_DEVICE, FLAGS_CHECKS, "--out", "--plot", "--quiet",
  NULL,
};

const struct cmd_def cmd_fit_def = {
  "fit", "--workload GEN --vary PARAM --limit BYTES|N%|FRACTION [--allocator A]... [--plot F.png]   the largest\n"
  "                   value of PARAM that completes under the limit, per strategy, without a GPU",
  "The largest value of the generator's integer parameter PARAM whose run completes under\n"
  "the limit, for each strategy (default caching and expandable: PyTorch's default and\n"
  "expandable_segments:True), on the simulated device unless --device cuda. The runs are\n"
  "made under limit - margin. The need is assumed to grow with the value and checked around\n"
  "the answer; a point that breaks it is reported and the answer stays below it.\n"
  "CSV: vary, max_value (empty: nothing fits), headroom_bytes (limit - peak reserved at\n"
  "max_value; the margin is part of it), next_value, next_needs_bytes (the smallest limit\n"
  "under which next_value completes, margin included), limit_bytes, margin_bytes, then the\n"
  "usual row of the run at max_value.\n"
  "\n"
  "--workload names one generator, with the job's other parameters. --trace SNAPSHOT is read\n"
  "for its limit only: from capture.py's side file beside it (SNAPSHOT's stem + .meta.json),\n"
  "else inferred from its OOM (the low end of the interval). --plot: peak reserved against\n"
  "the value per strategy, the limit drawn.\n",
  fit_opts, cmd_fit, NULL, NULL,
};

static void header(FILE *f) {
  fputs("vary,max_value,headroom_bytes,next_value,next_needs_bytes,limit_bytes,margin_bytes,", f);
  csv_write_header(f);
}

static void row(FILE *f, int id, const char *vary, const struct fit_report *rep, const struct run_result *r) {
  char run_id[16];
  csv_field(f, vary);
  if (rep->found) fprintf(f, ",%llu,%llu", (unsigned long long)rep->max_value, (unsigned long long)rep->headroom);
  else fputs(",,", f);
  if (rep->next_value) fprintf(f, ",%llu", (unsigned long long)rep->next_value); else fputc(',', f);
  if (rep->next_needs) fprintf(f, ",%llu", (unsigned long long)rep->next_needs); else fputc(',', f);
  fprintf(f, ",%llu,%llu,", (unsigned long long)rep->limit, (unsigned long long)rep->margin);
  snprintf(run_id, sizeof run_id, "%d", id);
  csv_write_row(f, run_id, r);
  fflush(f);
}

static void say(const char *wl, const char *vary, const struct fit_report *rep, const struct run_result *r) {
  char a[32], b[32], c[32];
  if (!rep->found)
    fprintf(stderr, "fit: %s x %s: nothing fits: %s=%llu needs %s (limit %s, margin %s)\n", wl, r->allocator, vary,
            (unsigned long long)rep->next_value, rep->next_needs ? fmt_bytes(rep->next_needs, a, sizeof a) : "more than the device",
            fmt_bytes(rep->limit, b, sizeof b), fmt_bytes(rep->margin, c, sizeof c));
  else {
    fprintf(stderr, "fit: %s x %s: %s=%llu fits (peak reserved %s, headroom %s of which the margin %s)", wl, r->allocator, vary,
            (unsigned long long)rep->max_value, fmt_bytes(r->peak_reserved, a, sizeof a), fmt_bytes(rep->headroom, b, sizeof b), fmt_bytes(rep->margin, c, sizeof c));
    if (rep->at_to) fprintf(stderr, "; --to reached, larger values not tried");
    else if (rep->next_needs) {
      uint64_t over = rep->next_needs > rep->limit ? rep->next_needs - rep->limit : 0;
      fprintf(stderr, "; %s=%llu needs %s, %s over the limit", vary, (unsigned long long)rep->next_value,
              fmt_bytes(rep->next_needs, a, sizeof a), fmt_bytes(over, c, sizeof c));
      if (over <= rep->margin)   /* inside the margin: the real job may fit it */
        fprintf(stderr, " (within the margin: it may fit for real; fit answers one step below when unsure)");
    } else
      fprintf(stderr, "; %s=%llu does not fit the device", vary, (unsigned long long)rep->next_value);
    fputc('\n', stderr);
  }
  if (rep->nonmono_value)
    fprintf(stderr, "fit: %s x %s: NON-MONOTONIC: %s=%llu %s; the answer is the largest value below every failure seen\n", wl,
            r->allocator, vary, (unsigned long long)rep->nonmono_value,
            rep->nonmono_completes ? "completes although a smaller value fails" : "fails although a larger value completes");
}

void fit_plot_paths(const char *plot, char *dat, char *meta, size_t n) {
  snprintf(dat, n, "%s.dat", plot);
  snprintf(meta, n, "%s.meta.gp", plot);
}

/* the plot's points: strategy i's k-th value, uncapped, one task each */
struct point { int cls, completed; uint64_t peak_reserved; };
struct points {
  const struct run_spec *base;
  const char **allocs;
  const char *vary;
  uint64_t from, step;
  int per;
  struct point *pt;
};

static void point_task(int t, void *ctx) {
  struct points *P = ctx;
  struct run_spec s = *P->base;
  s.allocator = P->allocs[t / P->per];
  struct run_result r;
  int cls = fit_point_uncapped(&s, P->vary, P->from + (uint64_t)(t % P->per) * P->step, &r);
  P->pt[t] = (struct point){cls, r.completed, r.peak_reserved};
}

/* --plot: uncapped peak reserved over the searched range, per strategy, its points on
 * `threads` workers (the searches' own: every core on sim, one on a GPU) */
static int plot(const struct cli_opts *o, const struct run_spec *base, const char **allocs, int nalloc,
                const struct fit_report *reps, const uint64_t *answer_reserved, int threads) {
  uint64_t from = o->from ? o->from : 1, hi = from + 4;
  for (int i = 0; i < nalloc; i++) {
    uint64_t top = reps[i].found ? reps[i].max_value + reps[i].max_value / 4 + 2 : from + 4;
    if (top > hi) hi = top;
  }
  if (o->to && hi > o->to) hi = o->to;
  uint64_t step = (hi - from) / 40 + 1;
  char dat[OUTFILE_PATH_MAX + 16], meta[OUTFILE_PATH_MAX + 16];
  fit_plot_paths(o->plot, dat, meta, sizeof dat);
  /* the picture, its data and meta file: each written beside its target and renamed into
   * place only when gnuplot drew it (gnuplot_run.h); a failure leaves them as they were */
  struct outfile od, om, op;
  FILE *d = outfile_open(&od, dat, "the plot data"), *m = d ? outfile_open(&om, meta, "the plot data") : NULL;
  if (!d || !m) {
    if (d) outfile_abort(&od);
    return 2;
  }
  fprintf(m, "n = %d\narray names[%d]\n", nalloc, nalloc);
  struct points pts = {.base = base, .allocs = allocs, .vary = o->vary, .from = from, .step = step,
                       .per = (int)((hi - from) / step + 1)};
  pts.pt = calloc((size_t)(nalloc * pts.per), sizeof *pts.pt);
  if (!pts.pt) { fprintf(stderr, "fragbench fit: out of host memory\n"); outfile_abort(&od); outfile_abort(&om); return 1; }
  row_pool_run(nalloc * pts.per, threads, point_task, NULL, NULL, &pts);
  for (int i = 0; i < nalloc; i++) {
    fprintf(d, "# %s\n", allocs[i]);
    for (int k = 0; k < pts.per; k++) {
      const struct point *pt = &pts.pt[i * pts.per + k];
      if (pt->cls || !pt->completed) break;   /* an error, or beyond the device */
      uint64_t v = from + (uint64_t)k * step;
      fprintf(d, "%llu\t%llu\t%d\n", (unsigned long long)v, (unsigned long long)pt->peak_reserved,
              reps[i].found && v <= reps[i].max_value);
    }
    fprintf(d, "\n\n");
    fprintf(m, "names[%d] = \"%s\"\n", i + 1, reps[i].found ? allocs[i] : allocs[i]);
  }
  fprintf(m, "limit = %llu.0\nmargin = %llu.0\nvary = \"%s\"\nworkload = \"%s\"\n", (unsigned long long)reps[0].limit,
          (unsigned long long)reps[0].margin, o->vary, base->workload);
  fprintf(m, "array maxv[%d]\n", nalloc);
  for (int i = 0; i < nalloc; i++) fprintf(m, "maxv[%d] = %lld\n", i + 1, reps[i].found ? (long long)reps[i].max_value : -1LL);
  free(pts.pt);
  fprintf(m, "array ansr[%d]\n", nalloc);   /* peak reserved of the answer's run, under limit - margin */
  for (int i = 0; i < nalloc; i++) fprintf(m, "ansr[%d] = %llu.0\n", i + 1, (unsigned long long)answer_reserved[i]);
  if (fflush(d) || ferror(d) || fflush(m) || ferror(m)) {
    fprintf(stderr, "fragbench fit: %s: cannot write the plot data\n", dat);
    outfile_abort(&od);
    outfile_abort(&om);
    return 2;
  }
  char gpdir[4096], script[4200], err[400];
  gnuplot_scripts_dir("fit.gp", gpdir, sizeof gpdir);   /* beside the binary: any working directory */
  snprintf(script, sizeof script, "%s/fit.gp", gpdir);
  size_t n = strlen(o->plot);
  const char *fmt = n > 4 && !strcmp(o->plot + n - 4, ".svg") ? "svg" : "png";
  int rc = gnuplot_draw(script, gpdir, fmt, o->plot, &od, &om, &op, err, sizeof err);
  if (rc == 1) fprintf(stderr, "fragbench fit: gnuplot is not installed: no picture (data in %s; apt-get install gnuplot-nox)\n", dat);
  if (rc == 3) fprintf(stderr, "fragbench fit: %s (%s) drawing %s: no picture; any existing one is as it was\n", err, script, o->plot);
  return rc == 1 ? 0 : rc == 3 ? 1 : rc;
}

/* the strategies' searches, one task each, written in order */
struct searches {
  const struct cli_opts *o;
  const struct run_spec *base;
  const char **allocs;
  uint64_t limit, margin;
  FILE *f;
  struct fit_report *reps;
  uint64_t *ansr;
  struct run_result *res;
  int *cls;
  int progress, worst;
};

static void search_task(int i, void *ctx) {
  struct searches *S = ctx;
  struct run_spec s = *S->base;
  s.allocator = S->allocs[i];
  S->cls[i] = fit_find(&s, S->o->vary, S->limit, S->margin, S->o->from, S->o->to, S->progress, &S->res[i], &S->reps[i]);
}

static int search_done(int i, void *ctx) {
  struct searches *S = ctx;
  const struct cli_opts *o = S->o;
  struct run_result *r = &S->res[i];
  if (S->cls[i]) {
    fprintf(stderr, "fragbench fit: %s x %s: %s\n", o->workloads[0], S->allocs[i], r->status);
    if (S->cls[i] > S->worst) S->worst = S->cls[i];
    return S->cls[i] == 2;   /* bad input: no row after it */
  }
  row(S->f, i + 1, o->vary, &S->reps[i], r);
  S->ansr[i] = S->reps[i].found ? r->peak_reserved : 0;
  if (!o->quiet || S->reps[i].nonmono_value) say(o->workloads[0], o->vary, &S->reps[i], r);
  return 0;
}

int cmd_fit(struct cli_opts *o) {
  if (o->nworkloads != 1 || o->ntraces > 1) {
    fprintf(stderr, "fragbench fit: give one --workload GEN[:k=v,...] (a generator; a trace has no parameter to vary; "
            "--trace SNAPSHOT, once, gives only the limit)\n");
    return 2;
  }
  if (!o->vary) {
    fprintf(stderr, "fragbench fit: --vary PARAM is required (see fragbench fit --help)\n");
    return 2;
  }
  if (o->ncaps > 1 || (o->ncaps && o->caps[0].kind == CAP_X)) {
    fprintf(stderr, "fragbench fit: one limit: --limit BYTES|N%%|FRACTION (or --oom-message)\n");
    return 2;
  }
  if (o->from && o->to && o->from > o->to) {
    fprintf(stderr, "fragbench fit: --from %llu is above --to %llu\n", (unsigned long long)o->from, (unsigned long long)o->to);
    return 2;
  }
  if (cli_check_selection(o)) return 2;
  static const char *default_alloc[] = {"caching", "expandable"};
  const char **allocs = o->nallocators ? o->allocators : default_alloc;
  int nalloc = o->nallocators ? o->nallocators : 2;
  if (!strcmp(o->device, "auto")) o->device = "sim";   /* fit answers without a GPU unless asked */
  struct device_config cfg;
  if (cli_pick_device(o, &cfg)) return 1;
  /* the limit: given (a fraction of this device's total) or from PyTorch's OOM message */
  uint64_t limit = cli_limit_on(o, &cfg);   /* on the device fit replays on */
  if (o->ncaps) cli_say_limit(o, &(struct limit){.from = LIMIT_GIVEN, .bytes = limit});   /* said back, as every command does */
  else {
    struct limit lim;
    char err[FB_ERRLEN];
    /* --trace SNAPSHOT: the limit beside it (capture.py's side file) or inferred from its OOM */
    struct limit_ask ask = {.oom_message = o->oom_message, .no_infer = !o->ntraces, .trace = o->ntraces ? o->traces[0] : NULL,
                            .trace_device = o->trace_device};
    if (limit_resolve(&ask, &lim, err)) { fprintf(stderr, "fragbench fit: %s\n", err); return 2; }
    if (lim.from == LIMIT_NONE) {
      fprintf(stderr, "fragbench fit: --limit BYTES|N%%|FRACTION (or --oom-message FILE, or --trace SNAPSHOT that ended in an OOM) "
              "is required\n");
      return 2;
    }
    cli_say_limit(o, &lim);
    limit = lim.from == LIMIT_INFERRED ? lim.ci.lo : lim.bytes;   /* inferred: plan for the low end, as advise */
    if (lim.from == LIMIT_INFERRED && !o->quiet) {
      char a[32];
      fprintf(stderr, "fragbench fit: planning for the low end of that interval, %s (%llu bytes) (capture.py's side file "
              "beside the snapshot, --limit or --oom-message gives it exactly)\n", fmt_bytes(limit, a, sizeof a), (unsigned long long)limit);
    }
  }
  uint64_t margin = OPT_GIVEN(o, margin) ? o->margin : fit_default_margin(limit);
  if (margin >= limit) {
    char ma[32], li[32];
    fprintf(stderr, "fragbench fit: --margin %s (%llu bytes) leaves nothing of the limit %s (%llu bytes)\n", fmt_bytes(margin, ma, sizeof ma),
            (unsigned long long)margin, fmt_bytes(limit, li, sizeof li), (unsigned long long)limit);
    return 2;
  }
  struct source src = {o->workloads[0], NULL, -1};
  struct run_spec base;
  cli_spec(o, &cfg, &src, &base);
  FILE *f = stdout;
  struct outfile of = {0};
  if (o->out && strcmp(o->out, "-") && !(f = outfile_open(&of, o->out, "--out"))) return 2;   /* kept only on success */
  header(f);
  struct fit_report *reps = calloc((size_t)nalloc, sizeof *reps);
  uint64_t *ansr = calloc((size_t)nalloc, sizeof *ansr);
  if (!reps || !ansr) { fprintf(stderr, "fragbench fit: out of host memory\n"); free(reps); free(ansr); return 1; }
  struct searches S = {.o = o, .base = &base, .allocs = allocs, .limit = limit, .margin = margin, .f = f, .reps = reps,
                       .ansr = ansr, .res = calloc((size_t)nalloc, sizeof *S.res), .cls = calloc((size_t)nalloc, sizeof *S.cls)};
  if (!S.res || !S.cls) { fprintf(stderr, "fragbench fit: out of host memory\n"); free(S.res); free(S.cls); free(reps); free(ansr); return 1; }
  int threads = row_pool_threads_on(cfg.kind);
  S.progress = !o->quiet && isatty(2) && threads == 1;   /* a probe line each, only where they come one at a time */
  row_pool_run(nalloc, threads, search_task, search_done, NULL, &S);
  int worst = S.worst;
  free(S.res);
  free(S.cls);
  if (f != stdout && outfile_finish(&of, worst < 2) && !worst) worst = 1;
  if (!worst && o->plot) {
    int rc = plot(o, &base, allocs, nalloc, reps, ansr, threads);
    worst = rc > worst ? rc : worst;
  }
  free(reps);
  free(ansr);
  return worst;
}
