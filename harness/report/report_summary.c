/* report_summary.c - report.md's Summary. It leads with what a PyTorch user can set
 * today: per workload, `fragbench advise`'s recommendation with its headroom under the
 * job's limit, and which of PyTorch's own settings (default caching, expandable_segments,
 * cudaMallocAsync, caching with knobs) reserves the least; then a table of those settings
 * over the workloads. Other frameworks' allocators (XLA/JAX BFC, CuPy, RMM) and the
 * research designs and references (stitch: GMLake's design, with its driver time; oracle:
 * the offline bound; raw) follow in their own labelled tables. A run that ran out of
 * memory shows where it died, never a figure of the part that ran; a strategy whose
 * figure carries a model error (model_err) is not ranked against one within that error. */
#include "status.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "report_cells.h"
#include "report_text.h"

#define B 256

/* the cell as the summary tables write it: "1.027x (9.37 GiB)", a range when the model
 * carries an error, where an OOM died, or the status */
static void cell_text(const struct run_folder *f, int w, int s, char *out, size_t len) {
  char a[B], b[B], c[B], d[B];
  if (!rc_has_run(f, w, s)) { snprintf(out, len, "-"); return; }
  if (rc_oom(f, w, s)) { rc_oom_text(f, w, s, out, len); return; }
  if (!rc_ok(f, w, s)) { rt_md(rc_value(f, w, s, "status"), out, len); return; }
  double x = rt_num(rc_value(f, w, s, "overhead")), r = rt_num(rc_value(f, w, s, "peak_reserved")), e = rc_model_err(f, w, s);
  if (e > 0) {   /* never below what is requested: a pool cannot reserve less */
    double lo, hi;
    rc_range(f, w, s, &lo, &hi);
    snprintf(out, len, "%s-%s (%s-%s; model ±%.0f%%)", rt_x_d(r > 0 ? x * lo / r : x, a, B), rt_x_d(x * (1 + e), b, B),
             rt_bytes_d(lo, c, B), rt_bytes_d(hi, d, B), e * 100);
  } else
    snprintf(out, len, "%s (%s)", rt_x_d(x, a, B), rt_bytes_d(r, b, B));
}

/* the completed strategies of group g on w measured exactly (no model error), by peak
 * reserved: a modelled figure is shown beside them, never ranked among them */
static int ranked(const struct run_folder *f, int w, enum rc_group g, int *L) {
  int n = 0;
  for (int s = 0; s < f->ns_cells; s++) {
    if (rc_group_of(f->strategy[s]) != g || !rc_ok(f, w, s) || !rc_value(f, w, s, "peak_reserved")[0] || rc_model_err(f, w, s) > 0) continue;
    int j = n++;
    while (j > 0 && rt_num(rc_value(f, w, L[j - 1], "peak_reserved")) > rt_num(rc_value(f, w, s, "peak_reserved"))) { L[j] = L[j - 1]; j--; }
    L[j] = s;
  }
  return n;
}

static double res(const struct run_folder *f, int w, int s) { return rt_num(rc_value(f, w, s, "peak_reserved")); }

static const char *setting_name(const struct run_folder *f, int w, int s, char *buf, size_t len) {
  const char *conf = rc_alloc_conf(f, w, s);
  if (!conf) return rt_md(f->strategy[s], buf, len);
  if (!strcmp(f->strategy[s], "caching")) snprintf(buf, len, "the default (caching)");
  else snprintf(buf, len, "`%s`", conf);
  return buf;
}

/* the job's limit: given or inferred, in words ("" when none) */
static void limit_text(const struct run_folder *f, int w, char *out, size_t len, double *cap) {
  char a[B], b[B], c[B];
  out[0] = 0;
  *cap = 0;
  for (int s = 0; s < f->ns_cells; s++) {
    if (!rc_has_run(f, w, s)) continue;
    const char *src = rc_value(f, w, s, "cap_source"), *cb = rc_value(f, w, s, "cap_bytes");
    if (!cb[0] || rt_num(cb) <= 0) continue;
    *cap = rt_num(cb);
    if (!strcmp(src, "inferred"))
      snprintf(out, len, "ran out of memory under a limit between %s and %s; replayed under %s", rt_bytes(rc_value(f, w, s, "cap_lo"), a, B),
               rt_bytes(rc_value(f, w, s, "cap_hi"), b, B), rt_bytes(cb, c, B));
    else
      snprintf(out, len, "replayed under a limit of %s", rt_bytes(cb, a, B));
    return;
  }
}

/* advise's recommendation for w: "set `X` (`fragbench advise`): peak reserved Y, Z of headroom under the limit" */
static int advice_sentence(const struct run_folder *f, int w, double cap, FILE *o) {
  const struct results *t = report_advise(f, w);
  char a[B], b[B], c[B], lab[800];
  if (!t || t->nrows == 0) return 0;
  const char *st = results_get(t, 0, "status"), *conf = results_get(t, 0, "alloc_conf");
  rf_strategy_label(t, 0, lab, sizeof lab);
  int fits = !st[0] || status_is(st, "ok");
  double r = rt_num(results_get(t, 0, "peak_reserved")), budget = rt_num(results_get(t, 0, "cap_bytes"));
  if (budget <= 0) budget = cap;
  int dflt = !strcmp(lab, "caching");   /* PyTorch's default, no knob */
  /* advise found nothing under the limit and advised without it: say so, not a negative headroom */
  int over = fits && budget > 0 && r > budget;
  if (over) fputs("nothing PyTorch can set fits under the limit; without it, ", o);
  if (!fits) fputs("no PyTorch setting fits (`fragbench advise`); the nearest is ", o);
  else fputs(dflt ? "keep " : "set ", o);
  if (dflt) fputs("**PyTorch's default** (`PYTORCH_CUDA_ALLOC_CONF` unset", o);
  else if (conf[0]) fprintf(o, "**`PYTORCH_CUDA_ALLOC_CONF=%s`** (", conf);
  else fprintf(o, "**%s** (", rt_md(lab, a, B));
  fputs(dflt ? (fits ? "; `fragbench advise`'s recommendation)" : ")") : (fits ? "`fragbench advise`'s recommendation)" : "`fragbench advise`)"), o);
  if (!fits) {   /* no figure of a run that died: where it died */
    const char *ev = results_get(t, 0, "first_oom_event");
    fprintf(o, ", which still %s", !strcmp(st, "oom") ? "runs out of memory" : "fails");
    if (ev[0]) fprintf(o, " at event %s", ev);
    if (budget > 0) fprintf(o, " under the %s limit", rt_bytes_d(budget, a, B));
  } else if (r > 0) {
    fprintf(o, ": peak reserved %s (%s)", rt_bytes_d(r, a, B), rt_x(results_get(t, 0, "overhead"), b, B));
    if (over) {
      double req = rt_num(results_get(t, 0, "peak_requested"));
      fprintf(o, "; the job asks for %s at once, more than the %s limit", rt_bytes_d(req, c, B), rt_bytes_d(budget, a, B));
    } else if (budget > 0) fprintf(o, ", %s of headroom under the %s limit", rt_bytes_d(budget - r, c, B), rt_bytes_d(budget, a, B));
    else fputs("; no limit known to measure headroom against (the snapshot did not run out of memory)", o);
  }
  return 1;
}

/* one bullet per workload: advise's recommendation, then PyTorch's settings */
static void pytorch_line(const struct run_folder *f, FILE *o, int w, int *L) {
  char a[B], b[B], c[B], lim[600];
  double cap;
  fprintf(o, "- **%s**", rt_md(f->workload[w], a, B));
  int k = -1;
  for (int s = 0; s < f->ns_cells && k < 0; s++) if (rc_ok(f, w, s) && rc_value(f, w, s, "peak_requested")[0]) k = s;
  limit_text(f, w, lim, sizeof lim, &cap);
  if (k >= 0 || lim[0]) {
    fputs(" (", o);
    if (k >= 0) fprintf(o, "peak requested %s", rt_bytes(rc_value(f, w, k, "peak_requested"), a, B));
    if (lim[0]) fprintf(o, "%s%s", k >= 0 ? "; " : "", lim);
    fputc(')', o);
  }
  fputs(": ", o);
  int adv = advice_sentence(f, w, cap, o);
  int n = ranked(f, w, RC_PYTORCH, L);
  if (n) {
    fprintf(o, "%s", adv ? ". Of PyTorch's settings, " : "of PyTorch's settings, ");
    int t = 1;   /* how many share the least */
    while (t < n && res(f, w, L[t]) == res(f, w, L[0])) t++;
    cell_text(f, w, L[0], c, sizeof c);
    if (t > 1) {
      for (int j = 0; j < t; j++) fprintf(o, "%s%s", j ? (j == t - 1 ? " and " : ", ") : "", setting_name(f, w, L[j], a, B));
      fprintf(o, " reserve the same, the least: %s", c);
    } else {
      fprintf(o, "%s reserves the least: %s", setting_name(f, w, L[0], a, B), c);
    }
    if (t < n) {
      double p0 = res(f, w, L[0]), p1 = res(f, w, L[t]);
      double pct = p1 > 0 ? (p1 - p0) * 100 / p1 : 0.0;
      if (pct < 0.05) fprintf(o, ", within 0.1%% of %s", setting_name(f, w, L[t], b, B));
      else fprintf(o, ", %.1f%% less than %s", pct, setting_name(f, w, L[t], b, B));
    }
  } else if (!adv) {
    fputs("none of PyTorch's settings completed", o);
  }
  /* a modelled setting beside them: its range, and where it lies against the least exact figure */
  for (int s = 0; s < f->ns_cells; s++) {
    if (rc_group_of(f->strategy[s]) != RC_PYTORCH || !rc_ok(f, w, s) || rc_model_err(f, w, s) <= 0) continue;
    cell_text(f, w, s, c, sizeof c);
    fprintf(o, "; %s is a model: %s", setting_name(f, w, s, a, B), c);
    if (n) {
      double lo, hi, r0 = res(f, w, L[0]);
      rc_range(f, w, s, &lo, &hi);
      fprintf(o, ", %s the least exact figure (%s), not ranked against it", hi < r0 ? "wholly below" : lo > r0 ? "wholly above" : "a range holding",
              rt_bytes_d(r0, b, B));
    }
  }
  int any = 0;
  for (int s = 0; s < f->ns_cells; s++) {
    if (rc_group_of(f->strategy[s]) != RC_PYTORCH || !rc_oom(f, w, s)) continue;
    rc_oom_text(f, w, s, c, sizeof c);
    fprintf(o, "%s%s: %s", any++ ? "; " : "; out of memory: ", setting_name(f, w, s, a, B), c);
  }
  fputs(".\n", o);
}

/* a table: a row per workload, a column per strategy of group g (and advise's column for PyTorch) */
static void group_table(const struct run_folder *f, FILE *o, enum rc_group g, int *L) {
  char a[B], c[600];
  int cols = 0;
  for (int s = 0; s < f->ns_cells; s++) cols += rc_group_of(f->strategy[s]) == g;
  if (!cols) return;
  fputs("| workload |", o);
  for (int s = 0; s < f->ns_cells; s++)
    if (rc_group_of(f->strategy[s]) == g) {
      const char *what = rc_what(f->strategy[s]);
      fprintf(o, " %s%s%s%s |", rt_md(f->strategy[s], a, B), what[0] ? " (" : "", what, what[0] ? ")" : "");
    }
  fputs("\n|---|", o);
  for (int i = 0; i < cols; i++) fputs("--:|", o);
  fputc('\n', o);
  for (int w = 0; w < f->nw; w++) {
    /* bold: every exact figure equal to the least (a tie bolds each); a modelled one never */
    int n = ranked(f, w, g, L), bold_ok = (g == RC_PYTORCH || g == RC_OTHER) && n > 0;
    fprintf(o, "| %s |", rt_md(f->workload[w], a, B));
    for (int s = 0; s < f->ns_cells; s++) {
      if (rc_group_of(f->strategy[s]) != g) continue;
      cell_text(f, w, s, c, sizeof c);
      int bold = bold_ok && rc_ok(f, w, s) && rc_model_err(f, w, s) <= 0 && rc_value(f, w, s, "peak_reserved")[0] && res(f, w, s) == res(f, w, L[0]);
      fprintf(o, " %s%s%s", bold ? "**" : "", c, bold ? "**" : "");
      if (g == RC_RESEARCH && rc_ok(f, w, s)) {   /* what it costs: driver time against expandable's */
        double mine = rt_num(rc_value(f, w, s, "modeled_driver_ns")), theirs = 0;
        for (int t = 0; t < f->ns_cells; t++)
          if (!strcmp(f->strategy[t], "expandable") && rc_ok(f, w, t)) theirs = rt_num(rc_value(f, w, t, "modeled_driver_ns"));
        if (mine > 0) fprintf(o, ", driver time %.1f ms", mine / 1e6);
        if (mine > 0 && theirs > 0) fprintf(o, " (%.1fx expandable's)", mine / theirs);
      }
      fputs(" |", o);
    }
    fputc('\n', o);
  }
  fputc('\n', o);
}

void report_summary(struct run_folder *f, FILE *o) {
  int *L = calloc((size_t)f->ns_cells + 1, sizeof *L);
  char verdict[2048];
  if (!L) abort();
  rc_oom_lookup(f);
  fputs("## Summary\n\n", o);
  report_verdict(f, verdict, sizeof verdict);
  fprintf(o, "%s\n\n### What you can set in PyTorch today\n\n", verdict);
  for (int w = 0; w < f->nw; w++) pytorch_line(f, o, w, L);
  fputs("\nPeak reserved / peak requested (lower is better; the least of each row measured exactly in bold; a modelled figure "
        "is a range, shown beside them and never ranked); a run that ran out of memory says where it died:\n\n", o);
  group_table(f, o, RC_PYTORCH, L);
  for (enum rc_group g = RC_OTHER; g < RC_NGROUPS; g++) {
    int any = 0;
    for (int s = 0; s < f->ns_cells; s++) any |= rc_group_of(f->strategy[s]) == g;
    if (!any) continue;
    fprintf(o, "### %s\n\n", rc_group_title(g));
    if (g == RC_OTHER) fputs("For comparison, and for a team choosing a framework: the same workloads through the allocators of other frameworks.\n\n", o);
    if (g == RC_RESEARCH)
      fputs("stitch is GMLake's design (virtual memory stitching, ASPLOS 2024): no framework ships it; it buys its memory with "
            "driver time (cuMemMap/cuMemUnmap on the allocation path), shown against expandable_segments'.\n\n", o);
    if (g == RC_REFERENCE)
      fputs("Bounds, not allocators: oracle plans over the whole trace ahead (the offline lower bound); raw calls cudaMalloc per "
            "request (no allocator overhead, the driver on every call).\n\n", o);
    group_table(f, o, g, L);
  }
  free(L);
}
