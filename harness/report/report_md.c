/* report_md.c - report.md of one bench run folder: the environment, where the figures
 * came from, a summary derived from the numbers, the plots that span all workloads, then
 * per workload its notes, a table (strategies as rows, the best of each column in bold)
 * and its plots. GitHub-flavoured Markdown.
 *
 * "Best" is the lowest value among rows that completed (status ok), leaving out the
 * reference rows: raw (one cudaMalloc per request: the lower bound of memory, paying the
 * driver on every call) and oracle (an offline plan that sees the whole trace ahead). */
#include "report.h"
#include <stdlib.h>
#include <string.h>
#include "report_text.h"
#include "alloc_conf.h"
#include "allocator.h"

#define B 256

static const char *ref_word(const char *s) { return !strncmp(s, "raw", 3) ? "baseline" : "offline reference"; }

/* a cell's field of the chosen runs.csv row ("" when none) */
static const char *rv(const struct run_folder *f, int w, int s, const char *col) {
  const struct rf_cell *c = rf_cell_at(f, w, s);
  return c && c->run >= 0 ? results_get(&f->runs, c->run, col) : "";
}
static int has_run(const struct run_folder *f, int w, int s) {
  const struct rf_cell *c = rf_cell_at(f, w, s);
  return c && c->run >= 0;
}
static const char *mx(const struct run_folder *f, int w, int s) {
  const struct rf_cell *c = rf_cell_at(f, w, s);
  return c && c->mincap >= 0 ? results_get(&f->mincap, c->mincap, "mincap_x") : NULL;
}
static int status_ok(const struct run_folder *f, int w, int s) { return has_run(f, w, s) && !strcmp(rv(f, w, s, "status"), "ok"); }
static int eligible(const struct run_folder *f, int w, int s) { return status_ok(f, w, s) && !rf_is_reference(f->strategy[s]); }
static int is_skipped(const struct run_folder *f, int w, int s) { return has_run(f, w, s) && !strncmp(rv(f, w, s, "status"), "skipped", 7); }

/* the lowest value of a column over workload w's eligible rows, or "" */
static const char *best(const struct run_folder *f, int w, const char *col) {
  const char *b = "";
  for (int s = 0; s < f->ns_cells; s++) {
    if (!eligible(f, w, s)) continue;
    const char *v = rv(f, w, s, col);
    if (v[0] && (!b[0] || rt_num(v) < rt_num(b))) b = v;
  }
  return b;
}

static void cell(FILE *o, const char *text, const char *val, const char *b) {
  int bold = b && b[0] && val[0] && rt_num(val) == rt_num(b);
  fprintf(o, " %s%s%s |", bold ? "**" : "", text, bold ? "**" : "");
}

/* strategies of w that ran ok with a value in col, sorted ascending (stable) */
static int sorted_by(const struct run_folder *f, int w, const char *col, int *L) {
  int n = 0;
  for (int s = 0; s < f->ns_cells; s++)
    if (rv(f, w, s, col)[0] && status_ok(f, w, s)) {
      int j = n++;
      while (j > 0 && rt_num(rv(f, w, L[j - 1], col)) > rt_num(rv(f, w, s, col))) { L[j] = L[j - 1]; j--; }
      L[j] = s;
    }
  return n;
}

static void listing(const struct run_folder *f, FILE *o, int w, const int *L, int n, int mincap) {
  char a[B], b[B];
  for (int i = 0; i < n; i++) {
    const char *v = mincap ? mx(f, w, L[i]) : rv(f, w, L[i], "overhead");
    fprintf(o, "%s%s %s", i ? ", " : "", rt_md(f->strategy[L[i]], a, B), rt_x(v, b, B));
    if (rf_is_reference(f->strategy[L[i]])) fprintf(o, " (%s)", ref_word(f->strategy[L[i]]));
  }
}

/* one bullet per workload: who needs the least and by how much, the ranking (by the
 * smallest cap that completes when mincap ran, else by uncapped overhead), the fastest,
 * and what did not run to the end */
static void summary_line(const struct run_folder *f, FILE *o, int w, int have_mincap, int *wins, int *fast) {
  char a[B], b[B], c[B];
  int *L = calloc((size_t)f->ns_cells + 1, sizeof *L);
  if (!L) abort();
  int n = sorted_by(f, w, "overhead", L), bs = -1, nb = -1;
  for (int i = 0; i < n; i++) {
    if (rf_is_reference(f->strategy[L[i]])) continue;
    if (bs < 0) bs = L[i]; else if (nb < 0) nb = L[i];
  }
  fprintf(o, "- **%s**", rt_md(f->workload[w], a, B));
  int k = bs >= 0 ? bs : (n ? L[0] : -1);
  if (k >= 0 && rv(f, w, k, "peak_requested")[0]) fprintf(o, " (peak requested %s)", rt_bytes(rv(f, w, k, "peak_requested"), a, B));
  fputs(": ", o);
  if (bs >= 0) {
    fprintf(o, "**%s** reserves the least, %s its peak requested (%s)", rt_md(f->strategy[bs], a, B),
            rt_x(rv(f, w, bs, "overhead"), b, B), rt_bytes(rv(f, w, bs, "peak_reserved"), c, B));
    if (nb >= 0) {
      double pb = rt_num(rv(f, w, bs, "peak_reserved")), pn = rt_num(rv(f, w, nb, "peak_reserved"));
      fprintf(o, ", %.1f%% less than the next best, %s at %s", pn == 0 ? 0.0 : -(pb - pn) * 100 / pn,
              rt_md(f->strategy[nb], a, B), rt_x(rv(f, w, nb, "overhead"), b, B));
    }
    fputc('.', o);
    wins[bs]++;
  } else {
    fputs("no strategy completed.", o);
  }
  int *ML = calloc((size_t)f->ns_cells + 1, sizeof *ML), mn = 0;
  if (!ML) abort();
  if (have_mincap)
    for (int s = 0; s < f->ns_cells; s++)
      if (mx(f, w, s)) {
        int j = mn++;
        while (j > 0 && rt_num(mx(f, w, ML[j - 1])) > rt_num(mx(f, w, s))) { ML[j] = ML[j - 1]; j--; }
        ML[j] = s;
      }
  if (mn > 0) { fputs(" Smallest cap that completes: ", o); listing(f, o, w, ML, mn, 1); fputc('.', o); }
  else if (n > 0) { fputs(" Overhead: ", o); listing(f, o, w, L, n, 0); fputc('.', o); }
  int fs = -1;
  for (int s = 0; s < f->ns_cells; s++)
    if (eligible(f, w, s) && rv(f, w, s, "ns_per_op")[0] && (fs < 0 || rt_num(rv(f, w, s, "ns_per_op")) < rt_num(rv(f, w, fs, "ns_per_op")))) fs = s;
  if (fs >= 0) { fprintf(o, " Fastest: %s, %.0f ns per call.", rt_md(f->strategy[fs], a, B), rt_num(rv(f, w, fs, "ns_per_op"))); fast[fs]++; }
  const char *what[3] = {" Out of memory: ", " Failed: ", " Skipped: "};
  for (int kind = 0; kind < 3; kind++) {
    int any = 0;
    for (int s = 0; s < f->ns_cells; s++) {
      if (!has_run(f, w, s) || status_ok(f, w, s)) continue;
      const char *st = rv(f, w, s, "status");
      int k2 = !strcmp(st, "oom") ? 0 : !strncmp(st, "skipped", 7) ? 2 : 1;
      if (k2 != kind) continue;
      fprintf(o, "%s%s", any++ ? ", " : what[kind], rt_md(f->strategy[s], a, B));
      if (kind == 1) fprintf(o, " (%s)", rt_md(st, b, B));
      if (kind == 2) {
        st += 7;
        if (*st == ':') st++;
        while (*st == ' ') st++;
        if (*st) fprintf(o, " (%s)", rt_md(st, b, B));
      }
    }
    if (any) fputc('.', o);
  }
  fputc('\n', o);
  free(L);
  free(ML);
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

static void workload_table(const struct run_folder *f, FILE *o, int w, int have_mincap, int have_sweep, int pytorch) {
  char a[B], b[B];
  const char *bp = best(f, w, "peak_reserved"), *bo = best(f, w, "overhead"), *bf = best(f, w, "frag"),
             *be = best(f, w, "ext_frag"), *bd = best(f, w, "modeled_driver_ns"), *bn = best(f, w, "ns_per_op"),
             *b9 = best(f, w, "p99_ns"), *bm = "";
  if (have_mincap)
    for (int s = 0; s < f->ns_cells; s++)
      if (mx(f, w, s) && !rf_is_reference(f->strategy[s]) && (!bm[0] || rt_num(mx(f, w, s)) < rt_num(bm))) bm = mx(f, w, s);
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
  for (int s = 0; s < f->ns_cells; s++) {
    const struct rf_cell *c = rf_cell_at(f, w, s);
    if (!c || (c->run < 0 && c->mincap < 0 && !c->nsweep)) continue;
    int el = eligible(f, w, s), ref = rf_is_reference(f->strategy[s]);
    const char *st = c->run >= 0 ? rv(f, w, s, "status") : "-";
    fprintf(o, "| %s", rt_md(f->strategy[s], a, B));
    if (ref) fprintf(o, " (%s)", ref_word(f->strategy[s]));
    fprintf(o, " | %s", rt_md(st, a, B));
    if (!strcmp(st, "oom") && rv(f, w, s, "first_oom_event")[0]) fprintf(o, " at event %s", rv(f, w, s, "first_oom_event"));
    fprintf(o, " | %s |", rt_bytes(rv(f, w, s, "peak_requested"), a, B));
    cell(o, rt_bytes(rv(f, w, s, "peak_reserved"), a, B), rv(f, w, s, "peak_reserved"), el ? bp : "");
    if (pytorch) {
      double mine = rt_num(rv(f, w, s, "peak_reserved")), theirs = rt_num(rv(f, w, s, "trace_peak_reserved"));
      if (!rv(f, w, s, "peak_reserved")[0] || theirs <= 0) fputs("  |", o);
      else if (mine == theirs) fputs(" = |", o);
      else fprintf(o, " %+.1f%% |", (mine - theirs) * 100 / theirs);
    }
    cell(o, rt_x(rv(f, w, s, "overhead"), a, B), rv(f, w, s, "overhead"), el ? bo : "");
    const char *v = rv(f, w, s, "frag");
    if (v[0]) snprintf(a, B, "%.3f", rt_num(v)); else a[0] = 0;
    cell(o, a, v, el ? bf : "");
    v = rv(f, w, s, "ext_frag");
    if (v[0]) snprintf(a, B, "%.3f", rt_num(v)); else a[0] = 0;
    cell(o, a, v, el ? be : "");
    if (have_mincap) {
      if (c->mincap >= 0) {
        fputc(' ', o);
        int bold = !ref && bm[0] && rt_num(mx(f, w, s)) == rt_num(bm);
        fprintf(o, "%s%s%s%s |", bold ? "**" : "", rt_x(mx(f, w, s), a, B), bold ? "**" : "",
                c->mincap_nonmono ? " (fails above: not monotonic)" : "");
      } else if (c->mincap_other >= 0 && !is_skipped(f, w, s)) {
        fprintf(o, " %s |", rt_md(results_get(&f->mincap, c->mincap_other, "status"), a, B));
      } else {
        fputs(" - |", o);
      }
    }
    if (have_sweep) { if (is_skipped(f, w, s)) fputs(" - |", o); else sweep_cell(c, o); }
    v = rv(f, w, s, "ns_per_op");
    if (v[0]) snprintf(a, B, "%.0f", rt_num(v)); else a[0] = 0;
    cell(o, a, v, el ? bn : "");
    v = rv(f, w, s, "p99_ns");
    if (v[0]) snprintf(a, B, "%.0f", rt_num(v)); else a[0] = 0;
    cell(o, a, v, el ? b9 : "");
    v = rv(f, w, s, "modeled_driver_ns");
    if (v[0]) snprintf(b, B, "%.1f ms", rt_num(v) / 1e6); else b[0] = 0;
    cell(o, b, v, el ? bd : "");
    fputc('\n', o);
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
  fprintf(o, "# fragbench report: %s\n\n", title);
  fprintf(o, "Device: **%s**. Every workload x strategy, replayed on one device; overhead = peak reserved / peak requested (1.00x is the lower bound).\n\n",
          rt_md(f->device_name, a, B));
  fputs("## Environment\n\n| | |\n|---|---|\n", o);
  for (int i = 0; i < f->nenv; i++) fprintf(o, "| %s | %s |\n", rt_md(f->env_key[i], a, B), rt_md(f->env_val[i], b, B));
  fputc('\n', o);
  report_sources(f, o);
  strategies_table(f, o);
  fputs("## Summary\n\n", o);
  int *wins = calloc((size_t)f->ns_cells + 1, sizeof *wins), *fast = calloc((size_t)f->ns_cells + 1, sizeof *fast);
  if (!wins || !fast) abort();
  for (int w = 0; w < f->nw; w++) summary_line(f, o, w, have_mincap, wins, fast);
  int bw = -1, fw = -1;
  for (int s = 0; s < f->ns_cells; s++) {
    if (wins[s] > (bw < 0 ? 0 : wins[bw])) bw = s;
    if (fast[s] > (fw < 0 ? 0 : fast[fw])) fw = s;
  }
  if (bw >= 0) fprintf(o, "\nLeast memory on the most workloads: **%s** (%d of %d).", rt_md(f->strategy[bw], a, B), wins[bw], f->nw);
  if (fw >= 0) fprintf(o, " Fastest on the most: **%s** (%d of %d).", rt_md(f->strategy[fw], a, B), fast[fw], f->nw);
  fputs("\n\n", o);
  free(wins);
  free(fast);
  fputs("Best in bold: the lowest value among the strategies that completed, leaving out the references: raw (one cudaMalloc per request, the baseline: no allocator overhead, but the driver on every call) and oracle (an offline plan that sees the whole trace ahead). ns/op and p99 are host time per alloc or free call without the driver; driver time is the time in device calls over the run (modeled on sim, measured on a GPU).\n\n", o);
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
