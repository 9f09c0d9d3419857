/* cli_fit.c - `fragbench fit`: for one generator and every strategy, the largest value
 * of a parameter (batch, seq, ...) that completes under a limit (harness/engine/fit.c),
 * one CSV row each: fit's columns (vary, max_value, headroom_bytes, next_value,
 * next_needs_bytes, limit_bytes, margin_bytes) then the usual results row of the run at
 * max_value; a sentence per strategy on stderr; --plot draws peak reserved against the
 * parameter per strategy with the limit (plots/fit.gp). Runs on sim unless --device
 * cuda is given: the point is to answer without a GPU. */
#include "cli.h"
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fit.h"

static const char fit_help[] =
"usage: fragbench fit --workload GEN[:k=v,...] --vary PARAM --limit BYTES|N%|FRACTION\n"
"                     [--allocator A]... [--alloc-conf S]... [--from N] [--to M]\n"
"                     [--margin BYTES] [--out F.csv] [--plot F.png|F.svg] [--device sim|cuda]\n"
"\n"
"The largest value of the generator's integer parameter PARAM (batch, seq, accum ...)\n"
"whose run completes under the limit, for each strategy (default: caching and\n"
"expandable, PyTorch's default and expandable_segments:True).\n"
"  --limit      what the job may reserve: bytes (10627186688, 9.9Gi), N% or a fraction\n"
"               (0.125) of the device's total, as torch.cuda.set_per_process_memory_fraction\n"
"  --margin     memory the job takes inside the limit that the generator does not\n"
"               describe (cuBLAS workspace, the model's error); the runs are made under\n"
"               limit - margin. Default " FIT_MARGIN_TEXT ", calibrated against PyTorch on an H100\n"
"               (README, \"What fits\"); --margin 0 for the generator alone\n"
"  --from/--to  the values searched (default 1 .. 65536); the need is assumed to grow\n"
"               with the value and checked around the answer\n"
"  --plot       peak reserved (uncapped) against the value per strategy, the limit drawn\n"
"CSV: vary, max_value (empty: nothing fits), headroom_bytes (limit - peak reserved at\n"
"max_value; the margin is part of it), next_value, next_needs_bytes (the smallest limit under which\n"
"next_value completes, margin included), limit_bytes, margin_bytes, then the usual row.\n";

void fit_usage(FILE *f) { fputs(fit_help, f); }

static uint64_t total_of(const struct device_config *cfg) {
  if (!strcmp(cfg->kind, "sim")) return cfg->sim_total ? cfg->sim_total : SIM_TOTAL_DEFAULT;
  struct device d;
  char err[FB_ERRLEN];
  if (device_open(&d, cfg, err)) return 0;
  uint64_t t = d.total;
  device_close(&d);
  return t;
}

/* BYTES | N% | FRACTION (a number in (0, 1]) of the device's total */
static int resolve_limit(const char *s, uint64_t total, uint64_t *out) {
  double f;
  if (!parse_double(s, &f) && f > 0 && f <= 1 && strchr(s, '.')) {
    *out = (uint64_t)(f * (double)total);
    return 0;
  }
  return parse_bytes(s, total, out) || !*out ? -1 : 0;
}

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

/* --plot: uncapped peak reserved over the searched range, per strategy */
static int plot(const struct cli_opts *o, const struct run_spec *base, const char **allocs, int nalloc,
                const struct fit_report *reps, const uint64_t *answer_reserved) {
  uint64_t from = o->from ? o->from : 1, hi = from + 4;
  for (int i = 0; i < nalloc; i++) {
    uint64_t top = reps[i].found ? reps[i].max_value + reps[i].max_value / 4 + 2 : from + 4;
    if (top > hi) hi = top;
  }
  if (o->to && hi > o->to) hi = o->to;
  uint64_t step = (hi - from) / 40 + 1;
  char dat[1024], meta[1024];
  snprintf(dat, sizeof dat, "%s.dat", o->plot);
  snprintf(meta, sizeof meta, "%s.meta.gp", o->plot);
  FILE *d = fopen(dat, "w"), *m = fopen(meta, "w");
  if (!d || !m) {
    fprintf(stderr, "fragbench fit: %s: cannot write the plot data\n", d ? meta : dat);
    if (d) fclose(d);
    if (m) fclose(m);
    return 2;
  }
  fprintf(m, "n = %d\narray names[%d]\n", nalloc, nalloc);
  for (int i = 0; i < nalloc; i++) {
    struct run_spec s = *base;
    s.allocator = allocs[i];
    fprintf(d, "# %s\n", allocs[i]);
    for (uint64_t v = from; v <= hi; v += step) {
      struct run_result r;
      if (fit_point_uncapped(&s, o->vary, v, &r)) break;
      if (!r.completed) break;   /* beyond the device */
      fprintf(d, "%llu\t%llu\t%d\n", (unsigned long long)v, (unsigned long long)r.peak_reserved,
              reps[i].found && v <= reps[i].max_value);
    }
    fprintf(d, "\n\n");
    fprintf(m, "names[%d] = \"%s\"\n", i + 1, reps[i].found ? allocs[i] : allocs[i]);
  }
  fprintf(m, "limit = %llu.0\nmargin = %llu.0\nvary = \"%s\"\nworkload = \"%s\"\n", (unsigned long long)reps[0].limit,
          (unsigned long long)reps[0].margin, o->vary, base->workload);
  fprintf(m, "array maxv[%d]\n", nalloc);
  for (int i = 0; i < nalloc; i++) fprintf(m, "maxv[%d] = %lld\n", i + 1, reps[i].found ? (long long)reps[i].max_value : -1LL);
  fprintf(m, "array ansr[%d]\n", nalloc);   /* peak reserved of the answer's run, under limit - margin */
  for (int i = 0; i < nalloc; i++) fprintf(m, "ansr[%d] = %llu.0\n", i + 1, (unsigned long long)answer_reserved[i]);
  fclose(d);
  fclose(m);
  if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
    fprintf(stderr, "fragbench fit: gnuplot is not installed: no picture (data in %s; apt-get install gnuplot-nox)\n", dat);
    return 0;
  }
  const char *gp = getenv("FB_PLOTS_DIR") ? getenv("FB_PLOTS_DIR") : "plots";
  size_t n = strlen(o->plot);
  const char *fmt = n > 4 && !strcmp(o->plot + n - 4, ".svg") ? "svg" : "png";
  if (strchr(o->plot, '\'') || strchr(gp, '\'')) { fprintf(stderr, "fragbench fit: a quote in the plot's path\n"); return 2; }
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "gnuplot -e \"fmt='%s'; out='%s'; dat='%s'; meta='%s'; gpdir='%s'\" '%s/fit.gp'", fmt, o->plot, dat,
           meta, gp, gp);
  int rc = system(cmd);
  if (rc != 0) {
    fprintf(stderr, "fragbench fit: gnuplot %s/fit.gp failed (exit %d)\n", gp, WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
    return 1;
  }
  return 0;
}

int cmd_fit(struct cli_opts *o) {
  if (o->nworkloads != 1 || o->ntraces) {
    fprintf(stderr, "fragbench fit: give one --workload GEN[:k=v,...] (a generator; a trace has no parameter to vary)\n");
    return 2;
  }
  if (!o->vary || !o->limit) {
    fprintf(stderr, "fragbench fit: %s is required (see fragbench fit --help)\n", !o->vary ? "--vary PARAM" : "--limit BYTES|N%|FRACTION");
    return 2;
  }
  if (o->ncaps || o->devices || o->timeline || o->on_oom == ON_OOM_SKIP) {
    fprintf(stderr, "fragbench fit: --cap/--cap-bytes/--cap-x, --devices, --timeline and --on-oom skip do not apply: fit sets the cap (--limit)\n");
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
  uint64_t limit;
  if (resolve_limit(o->limit, total_of(&cfg), &limit)) {
    fprintf(stderr, "fragbench fit: --limit '%s': expected bytes (10627186688, 9.9Gi), N%% or a fraction such as 0.125\n", o->limit);
    return 2;
  }
  uint64_t margin = o->margin_given ? o->margin : fit_default_margin(limit);
  if (margin >= limit) {
    fprintf(stderr, "fragbench fit: --margin %llu leaves nothing of the limit %llu\n", (unsigned long long)margin, (unsigned long long)limit);
    return 2;
  }
  struct source src = {o->workloads[0], NULL, -1};
  struct run_spec base;
  cli_spec(o, &cfg, &src, &base);
  FILE *f = stdout;
  if (o->out && strcmp(o->out, "-") && !(f = fopen(o->out, "w"))) {
    fprintf(stderr, "fragbench fit: %s: cannot write\n", o->out);
    return 2;
  }
  header(f);
  struct fit_report *reps = calloc((size_t)nalloc, sizeof *reps);
  uint64_t *ansr = calloc((size_t)nalloc, sizeof *ansr);
  if (!reps || !ansr) { fprintf(stderr, "fragbench fit: out of host memory\n"); free(reps); free(ansr); return 1; }
  int worst = 0, progress = !o->quiet && isatty(2);
  for (int ai = 0; ai < nalloc; ai++) {
    base.allocator = allocs[ai];
    struct run_result r;
    int cls = fit_find(&base, o->vary, limit, margin, o->from, o->to, progress, &r, &reps[ai]);
    if (cls) {
      fprintf(stderr, "fragbench fit: %s x %s: %s\n", o->workloads[0], allocs[ai], r.status);
      worst = cls > worst ? cls : worst;
      if (cls == 2) break;
      continue;
    }
    row(f, ai + 1, o->vary, &reps[ai], &r);
    ansr[ai] = reps[ai].found ? r.peak_reserved : 0;
    if (!o->quiet || reps[ai].nonmono_value) say(o->workloads[0], o->vary, &reps[ai], &r);
  }
  if (f != stdout) fclose(f);
  if (!worst && o->plot) {
    int rc = plot(o, &base, allocs, nalloc, reps, ansr);
    worst = rc > worst ? rc : worst;
  }
  free(reps);
  free(ansr);
  return worst;
}
