/* report_md.c - report.md of one bench run folder: the environment, where the figures
 * came from, a summary derived from the numbers, the plots that span all workloads, then
 * per workload its notes, a table (strategies as rows, grouped as report_cells.h groups
 * them, the best of each column in bold) and its plots. GitHub-flavoured Markdown.
 *
 * "Best" is the lowest value among rows that completed (status ok) of allocators one can
 * use (PyTorch's settings, other frameworks'), never a research design (stitch) or a
 * reference (raw, oracle), and never a modelled figure (model_err > 0: a range, shown
 * beside the exact ones, which are ranked among themselves). An OOM row shows where it died, not figures of the part that ran. */
#include "report.h"
#include <stdlib.h>
#include <string.h>
#include "report_text.h"
#include "report_cells.h"
#include "alloc_conf.h"
#include "allocator.h"

#define B 256

#define rv rc_value
#define has_run rc_has_run
#define status_ok rc_ok
#define mx rc_mincap_x
/* a row that may be "best": completed, and an allocator one can use (PyTorch's or another
 * framework's), not a research design or a reference */
static int eligible(const struct run_folder *f, int w, int s) {
  enum rc_group g = rc_group_of(f->strategy[s]);
  return status_ok(f, w, s) && (g == RC_PYTORCH || g == RC_OTHER);
}
static int is_skipped(const struct run_folder *f, int w, int s) { return has_run(f, w, s) && !strncmp(rv(f, w, s, "status"), "skipped", 7); }

/* the lowest value of a column over workload w's eligible rows measured exactly, or "".
 * A modelled row (model_err > 0: cudaMallocAsync on sim) is never best and never keeps
 * another from being best: its figure is a range shown beside the exact ones. err is
 * kept for the callers' reading: 1 memory, 2 frag/ext_frag, 0 time. */
static const char *best(const struct run_folder *f, int w, const char *col, int err) {
  const char *b = "";
  for (int s = 0; s < f->ns_cells; s++) {
    if (!eligible(f, w, s) || (err && rc_model_err(f, w, s) > 0)) continue;
    const char *v = rv(f, w, s, col);
    if (v[0] && (!b[0] || rt_num(v) < rt_num(b))) b = v;
  }
  return b;
}

static void cell(FILE *o, const char *text, const char *val, const char *b) {
  int bold = b && b[0] && val[0] && rt_num(val) == rt_num(b);
  fprintf(o, " %s%s%s |", bold ? "**" : "", text, bold ? "**" : "");
}

/* the sweep's smallest completing cap, marked when a larger cap failed */
static void sweep_cell(const struct rf_cell *c, FILE *o) {
  char a[B];
  if (!c || !c->nsweep) { fputs(" - |", o); return; }
  double first = -1, lastfail = -1;
  for (int i = 0; i < c->nsweep; i++) {
    if (c->sweep[i].completed) { if (first < 0 || c->sweep[i].x < first) first = c->sweep[i].x; }
    else if (c->sweep[i].x > lastfail) lastfail = c->sweep[i].x;
  }
  if (first < 0) { fputs(" none |", o); return; }
  fprintf(o, " %s%s |", rt_x_d(first, a, B), lastfail > first ? " (not monotonic)" : "");
}

/* a memory figure, as a range when the strategy's model carries an error */
static void mem_cell(FILE *o, const struct run_folder *f, int w, int s, const char *col, int bytes, const char *b) {
  char t[B], u[B];
  const char *v = rv(f, w, s, col);
  double e = rc_model_err(f, w, s), x = rt_num(v);
  if (!v[0]) { cell(o, "", v, b); return; }
  if (e > 0) {   /* a range, never below peak requested (a pool cannot reserve less) and never bold */
    char r[2 * B + 16];
    double lo, hi, pr = rt_num(rv(f, w, s, "peak_reserved"));
    rc_range(f, w, s, &lo, &hi);
    double k = pr > 0 ? lo / pr : 1 - e;
    if (bytes) snprintf(r, sizeof r, "%s-%s (±%.0f%%)", rt_bytes_d(x * k, t, B), rt_bytes_d(x * (1 + e), u, B), e * 100);
    else if (!strcmp(col, "overhead")) snprintf(r, sizeof r, "%s-%s", rt_x_d(x * k, t, B), rt_x_d(x * (1 + e), u, B));
    else snprintf(r, sizeof r, "~%.3f", x);
    cell(o, r, v, "");
    return;
  }
  if (bytes) rt_bytes(v, t, B);
  else if (!strcmp(col, "overhead")) rt_x(v, t, B);
  else snprintf(t, B, "%.3f", x);
  cell(o, t, v, b);
}

static void workload_row(const struct run_folder *f, FILE *o, int w, int s, int have_mincap, int have_sweep, int pytorch,
                         const char *const *bb, const char *bm) {
  char a[B], b[B];
  const struct rf_cell *c = rf_cell_at(f, w, s);
  int el = eligible(f, w, s), oom = rc_oom(f, w, s), ref = rc_group_of(f->strategy[s]) == RC_REFERENCE;
  const char *st = c->run >= 0 ? rv(f, w, s, "status") : "-", *what = rc_what(f->strategy[s]);
  fprintf(o, "| %s", rt_md(f->strategy[s], a, B));
  if (what[0]) fprintf(o, " (%s)", what);
  if (oom) fprintf(o, " | **%s** |", rc_oom_text(f, w, s, a, B));
  else fprintf(o, " | %s |", rt_md(st, a, B));
  if (oom) {   /* figures of the part that ran are not figures of the run: none */
    fputs(pytorch ? " - | - | - | - | - | - |" : " - | - | - | - | - |", o);
  } else {
    fprintf(o, " %s |", rt_bytes(rv(f, w, s, "peak_requested"), a, B));
    mem_cell(o, f, w, s, "peak_reserved", 1, el ? bb[0] : "");
    if (pytorch) {
      double mine = rt_num(rv(f, w, s, "peak_reserved")), theirs = rt_num(rv(f, w, s, "trace_peak_reserved"));
      if (!rv(f, w, s, "peak_reserved")[0] || theirs <= 0) fputs("  |", o);
      else if (mine == theirs) fputs(" = |", o);
      else fprintf(o, " %+.1f%% |", (mine - theirs) * 100 / theirs);
    }
    mem_cell(o, f, w, s, "overhead", 0, el ? bb[1] : "");
    mem_cell(o, f, w, s, "frag", 0, el ? bb[2] : "");
    mem_cell(o, f, w, s, "ext_frag", 0, el ? bb[3] : "");
  }
  if (have_mincap) {
    if (c->mincap >= 0) {
      fputc(' ', o);
      int bold = !ref && rc_group_of(f->strategy[s]) != RC_RESEARCH && rc_model_err(f, w, s) <= 0 && bm[0] && rt_num(mx(f, w, s)) == rt_num(bm);
      fprintf(o, "%s%s%s%s |", bold ? "**" : "", rt_x(mx(f, w, s), a, B), bold ? "**" : "",
              c->mincap_nonmono ? " (fails above: not monotonic)" : "");
    } else if (c->mincap_other >= 0 && !is_skipped(f, w, s)) {
      fprintf(o, " %s |", rt_md(results_get(&f->mincap, c->mincap_other, "status"), a, B));
    } else {
      fputs(" - |", o);
    }
  }
  if (have_sweep) { if (is_skipped(f, w, s)) fputs(" - |", o); else sweep_cell(c, o); }
  if (oom) { fputs(" - | - | - |\n", o); return; }
  const char *v = rv(f, w, s, "ns_per_op");
  if (v[0]) snprintf(a, B, "%.0f", rt_num(v)); else a[0] = 0;
  cell(o, a, v, el ? bb[4] : "");
  v = rv(f, w, s, "p99_ns");
  if (v[0]) snprintf(a, B, "%.0f", rt_num(v)); else a[0] = 0;
  cell(o, a, v, el ? bb[5] : "");
  v = rv(f, w, s, "modeled_driver_ns");
  if (v[0]) snprintf(b, B, "%.1f ms", rt_num(v) / 1e6); else b[0] = 0;
  cell(o, b, v, el ? bb[6] : "");
  fputc('\n', o);
}

/* the strategies as rows, grouped: PyTorch's settings, other frameworks', research, references */
static void workload_table(const struct run_folder *f, FILE *o, int w, int have_mincap, int have_sweep, int pytorch) {
  const char *bb[7] = {best(f, w, "peak_reserved", 1), best(f, w, "overhead", 1), best(f, w, "frag", 2), best(f, w, "ext_frag", 2),
                       best(f, w, "ns_per_op", 0), best(f, w, "p99_ns", 0), best(f, w, "modeled_driver_ns", 0)};
  const char *bm = "";
  if (have_mincap) {
    for (int s = 0; s < f->ns_cells; s++) {   /* among the exact: a modelled mincap is never best */
      enum rc_group g = rc_group_of(f->strategy[s]);
      if (mx(f, w, s) && (g == RC_PYTORCH || g == RC_OTHER) && rc_model_err(f, w, s) <= 0 && (!bm[0] || rt_num(mx(f, w, s)) < rt_num(bm))) bm = mx(f, w, s);
    }
  }
  fputs("| strategy | status | peak requested | peak reserved |", o);
  if (pytorch) fputs(" vs PyTorch |", o);
  fputs(" overhead | frag | ext_frag |", o);
  if (have_mincap) fputs(" mincap_x |", o);
  if (have_sweep) fputs(" sweep: completes from |", o);
  fputs(" ns/op | p99 ns | driver time |\n|---|---|--:|--:|", o);
  if (pytorch) fputs("--:|", o);
  fputs("--:|--:|--:|", o);
  if (have_mincap) fputs("--:|", o);
  if (have_sweep) fputs("--:|", o);
  fputs("--:|--:|--:|\n", o);
  for (enum rc_group g = RC_PYTORCH; g < RC_NGROUPS; g++)
    for (int s = 0; s < f->ns_cells; s++) {
      const struct rf_cell *c = rf_cell_at(f, w, s);
      if (rc_group_of(f->strategy[s]) != g || !c || (c->run < 0 && c->mincap < 0 && !c->nsweep)) continue;
      workload_row(f, o, w, s, have_mincap, have_sweep, pytorch, bb, bm);
    }
  fputc('\n', o);
}

static int img(FILE *o, const struct report_images *im, const char *name, const char *alt) {
  if (!report_has_image(im, name)) return 0;
  fprintf(o, "![%s](plots/%s)\n\n", alt, name);
  return 1;
}

/* the strategies in the folder: what each was checked against (allocator_ops.validated,
 * `make validate`) and how a stock PyTorch user switches it on */
static void strategies_table(const struct run_folder *f, FILE *o) {
  char a[B], b[600], c[B], name[64];
  fputs("## Strategies\n\n| strategy | validated against the real allocator (`make validate`) | in stock PyTorch |\n|---|---|---|\n", o);
  for (int s = 0; s < f->ns_cells; s++) {
    snprintf(name, sizeof name, "%s", f->strategy[s]);
    name[strcspn(name, ":")] = 0;
    const struct allocator_ops *ops = allocator_find(name);
    if (!ops) continue;
    fprintf(o, "| %s | %s | %s |\n", rt_md(f->strategy[s], a, B), rt_md(ops->validated ? ops->validated : "not yet", b, sizeof b),
            rt_md(alloc_conf_how(ops->name), c, B));
  }
  fputc('\n', o);
}

/* file-name-safe form of a label, as the plot data names its files */
static void safe(const char *s, char *out, size_t len) {
  size_t k = 0;
  for (; *s && k + 1 < len; s++) out[k++] = (strchr("._-", *s) || (*s >= '0' && *s <= '9') || ((*s | 32) >= 'a' && (*s | 32) <= 'z')) ? *s : '_';
  out[k] = 0;
}

void report_write_md(struct run_folder *f, FILE *o, const char *title, const char *fmt, const struct report_images *im) {
  char a[B], b[B], name[B * 2];
  int have_mincap = 0, have_sweep = 0;
  for (int i = 0; i < f->nw * f->ns_cells; i++) {
    if (f->cells[i].mincap >= 0) have_mincap = 1;
    if (f->cells[i].nsweep) have_sweep = 1;
  }
  char verdict[2048];
  report_verdict(f, verdict, sizeof verdict);   /* the first line: what to set */
  fprintf(o, "%s\n\n# fragbench report: %s\n\n", verdict, title);
  fprintf(o, "Device: **%s**. Every workload x strategy, replayed on one device; overhead = peak reserved / peak requested (1.00x is the lower bound).\n\n",
          rt_md(f->device_name, a, B));
  fputs("## Environment\n\n| | |\n|---|---|\n", o);
  for (int i = 0; i < f->nenv; i++) fprintf(o, "| %s | %s |\n", rt_md(f->env_key[i], a, B), rt_md(f->env_val[i], b, B));
  fputc('\n', o);
  report_sources(f, o);
  strategies_table(f, o);
  report_summary(f, o);
  char ov[64], mc[64], la[64];
  snprintf(ov, sizeof ov, "overhead.%s", fmt);
  snprintf(mc, sizeof mc, "mincap.%s", fmt);
  snprintf(la, sizeof la, "latency.%s", fmt);
  if (report_has_image(im, ov) || report_has_image(im, mc) || report_has_image(im, la)) {
    fputs("## Plots\n\n", o);
    img(o, im, ov, "memory overhead per workload and strategy");
    img(o, im, mc, "smallest cap that completes per workload and strategy");
    img(o, im, la, "host ns per call per strategy");
  }
  report_tradeoff(f, o, fmt, im);
  report_history(f, o);   /* DIR/history.md: peak reserved across bench runs (report_history.c) */
  fputs("## Per workload\n\nIn the tables below, strategies are grouped: PyTorch's settings first, then other frameworks' allocators, "
        "research designs and references. Best in bold: the lowest value among the allocators one can use (PyTorch's and other "
        "frameworks') that completed; never a research design (stitch) or a reference (raw, one cudaMalloc per request; oracle, "
        "an offline plan that sees the whole trace ahead), nor a modelled figure (model_err: a range, never below peak requested), "
        "which does not keep the exact figures from being ranked. A run that ran out of memory shows where it died instead of figures of the part that ran. "
        "ns/op and p99 are host time per alloc or free call without the driver: p99 from calls timed alone, ns/op the replay "
        "loop's mean, which includes what the row's ns_per_op_includes names (a bench run writes its timeline in the same loop) "
        "and any time the host took the core away, so it can stand above p99. Driver time is the time in device calls over "
        "the run (modeled on sim, measured on a GPU).\n\n", o);
  for (int w = 0; w < f->nw; w++) {
    fprintf(o, "## %s\n\n", rt_md(f->workload[w], a, B));
    report_snapshot_notes(f, w, o, im);
    int pytorch = 0;
    for (int s = 0; s < f->ns_cells; s++) if (rt_num(rv(f, w, s, "trace_peak_reserved")) > 0) pytorch = 1;
    workload_table(f, o, w, have_mincap, have_sweep, pytorch);
    safe(f->workload[w], b, B);
    snprintf(name, sizeof name, "timeline-%s.%s", b, fmt);
    snprintf(a, B, "%s: memory over the run", f->workload[w]);
    img(o, im, name, a);
    snprintf(name, sizeof name, "capsweep-%s.%s", b, fmt);
    snprintf(a, B, "%s: cap sweep", f->workload[w]);
    img(o, im, name, a);
  }
}
