/* plot_series.c - the gnuplot data of the per-workload plots: timeline-W (from
 * timeline-W.csv: a block per strategy of event, requested, allocated, reserved, and the
 * highest requested / reserved since the previous sample) and capsweep-W (from
 * capsweep.csv: per strategy a block of every cap with completed 1/0, then a block of the
 * caps that completed with their peak reserved: an OOM row's reserved is not a figure to
 * draw on the same line). See plot_data.h. */
#include "status.h"
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "plot_data.h"
#include "params.h"

static const char *unit_for(double maxb, double *div) {
  if (maxb >= 1073741824.0) { *div = 1073741824.0; return "GiB"; }
  if (maxb >= 1048576.0) { *div = 1048576.0; return "MiB"; }
  *div = 1024.0;
  return "KiB";
}

/* the uncapped, completed row of (w, s), or -1 */
static int ok_row(const struct run_folder *f, int w, int s) {
  const struct rf_cell *c = rf_cell_at(f, w, s);
  return c && c->run >= 0 && status_is(results_get(&f->runs, c->run, "status"), "ok") ? c->run : -1;
}

/* the limit workload w's rows ran under: 0 when none; inferred (with its interval) or given */
static void limit_of(const struct run_folder *f, int w, double *cap, double *lo, double *hi, int *inferred) {
  *cap = *lo = *hi = 0;
  *inferred = 0;
  for (int s = 0; s < f->ns_cells; s++) {
    const struct rf_cell *c = rf_cell_at(f, w, s);
    if (!c || c->run < 0 || results_num(&f->runs, c->run, "cap_bytes", NULL) <= 0) continue;
    *cap = results_num(&f->runs, c->run, "cap_bytes", NULL);
    *inferred = !strcmp(results_get(&f->runs, c->run, "cap_source"), "inferred");
    if (*inferred) { *lo = results_num(&f->runs, c->run, "cap_lo", NULL); *hi = results_num(&f->runs, c->run, "cap_hi", NULL); }
    return;
  }
}

/* cap, caplo, caphi (bytes; 0 = none) and captext, the limit in words, for the plots */
static void limit_meta(FILE *m, double cap, double lo, double hi, int inferred) {
  char a[48], b[48], c[48], t[200] = "";
  if (cap > 0 && inferred && hi > lo)
    snprintf(t, sizeof t, "job's limit: inferred %s-%s (band), replayed at %s", fmt_bytes((uint64_t)lo, a, sizeof a),
             fmt_bytes((uint64_t)hi, b, sizeof b), fmt_bytes((uint64_t)cap, c, sizeof c));
  else if (cap > 0)
    snprintf(t, sizeof t, "job's limit (%s): %s", inferred ? "inferred" : "given", fmt_bytes((uint64_t)cap, a, sizeof a));
  fprintf(m, "cap = %.0f\ncaplo = %.0f\ncaphi = %.0f\ncaptext = ", cap, inferred ? lo : 0, inferred ? hi : 0);
  pd_gq(m, t);
  fputc('\n', m);
}

/* the workload a timeline-NAME.csv belongs to: NAME, or the one workload whose label up
 * to its first dot is NAME (older bench folders named trace timelines so) */
static int timeline_workload(const struct run_folder *f, const char *name) {
  int w = rf_workload_index(f, name), found = -1, n = 0;
  if (w >= 0) return w;
  for (int i = 0; i < f->nw; i++) {
    const char *dot = strchr(f->workload[i], '.');
    if (dot && dot > f->workload[i] && strlen(name) == (size_t)(dot - f->workload[i]) && !strncmp(f->workload[i], name, strlen(name))) { found = i; n++; }
  }
  return n == 1 ? found : -1;
}

static int one_timeline(struct run_folder *f, const char *dir, const char *file, FILE *list, char *err, size_t errlen) {
  static const char *const need[] = {"allocator", "event", "requested", "allocated", "reserved", NULL};
  char path[1400], name[600], sname[700], label[800];
  snprintf(path, sizeof path, "%s/%s", f->dir, file);
  struct results t;
  if (results_load_table(path, need, &t, err, errlen)) return 2;
  snprintf(name, sizeof name, "%.*s", (int)(strlen(file) - strlen("timeline-") - strlen(".csv")), file + strlen("timeline-"));
  int w = timeline_workload(f, name);
  const char *wl = w >= 0 ? f->workload[w] : name;
  /* the strategies in order of first appearance, as the results rows name them */
  int *sidx = malloc(((size_t)t.nrows + 1) * sizeof *sidx), *sl = malloc(((size_t)t.nrows + 1) * sizeof *sl), n = 0;
  if (!sidx || !sl) abort();
  for (int r = 0; r < t.nrows; r++) {
    const char *p = results_get(&t, r, "params");
    snprintf(label, sizeof label, "%s%s%s", results_get(&t, r, "allocator"), p[0] ? ":" : "", p);
    sidx[r] = rf_strategy_index(f, label, 1);
    int seen = 0;
    for (int j = 0; j < n && !seen; j++) seen = sl[j] == sidx[r];
    if (!seen) sl[n++] = sidx[r];
  }
  pd_safe(wl, sname, sizeof sname);
  snprintf(label, sizeof label, "timeline-%s", sname);
  FILE *d = pd_open(dir, label, ".dat", err, errlen), *m = d ? pd_open(dir, label, ".meta.gp", err, errlen) : NULL;
  if (!m) { if (d) fclose(d); results_free(&t); free(sidx); free(sl); return 2; }
  int k = n > 0 ? n : 1;
  fprintf(m, "array peakreq[%d]\narray peakres[%d]\narray panelmax[%d]\narray notes[%d]\narray leakbase[%d]\n", k, k, k, k, k);
  fprintf(m, "array oomev[%d]\narray oomres[%d]\n", k, k);
  double cap = 0, caplo = 0, caphi = 0;
  int inferred = 0;
  if (w >= 0) limit_of(f, w, &cap, &caplo, &caphi, &inferred);
  double ymax = 0, xmax = 0, leakmax = 0;
  for (int j = 0; j < n; j++) {
    int row = w >= 0 ? ok_row(f, w, sl[j]) : -1;
    double pq = row >= 0 && results_get(&f->runs, row, "peak_requested")[0] ? results_num(&f->runs, row, "peak_requested", NULL) : -1;
    double pr = row >= 0 && results_get(&f->runs, row, "peak_reserved")[0] ? results_num(&f->runs, row, "peak_reserved", NULL) : -1;
    double leak = row >= 0 ? results_num(&f->runs, row, "leak_bytes_per_iter", NULL) : 0;
    double py = pr > pq ? pr : pq;
    /* a leak on one sample per iteration: the requested level against iteration 2's (the
     * slope's first), drawn on its own axis, where a few KiB per step become visible */
    double base = -1, prev_iter = -1;
    int consecutive = 1, count = 0;
    for (int r = 0; r < t.nrows; r++) {
      if (sidx[r] != sl[j]) continue;
      double it = results_num(&t, r, "iter", NULL);
      if (count++ && it != prev_iter + 1) consecutive = 0;
      prev_iter = it;
      if (base < 0 && it >= 2) base = results_num(&t, r, "requested", NULL);
    }
    if (!(fabs(leak) >= 1 && consecutive && count >= 3 && results_col(&t, "iter") >= 0)) base = -1;
    for (int r = 0; base >= 0 && r < t.nrows; r++)
      if (sidx[r] == sl[j] && results_num(&t, r, "requested", NULL) - base > leakmax) leakmax = results_num(&t, r, "requested", NULL) - base;
    fprintf(m, "leakbase[%d] = %.0f\n", j + 1, base);
    fprintf(d, "# %s\n", f->strategy[sl[j]]);
    for (int r = 0; r < t.nrows; r++) {
      if (sidx[r] != sl[j]) continue;
      const char *mq = results_get(&t, r, "max_requested"), *mr = results_get(&t, r, "max_reserved");
      /* older timelines lack the window's highs: the levels stand in */
      if (!mq[0]) mq = results_get(&t, r, "requested");
      if (!mr[0]) mr = results_get(&t, r, "reserved");
      fprintf(d, "%s\t%s\t%s\t%s\t%s\t%s\n", results_get(&t, r, "event"), results_get(&t, r, "requested"),
              results_get(&t, r, "allocated"), results_get(&t, r, "reserved"), mq, mr);
      double v[4] = {results_num(&t, r, "reserved", NULL), strtod(mr, NULL), results_num(&t, r, "allocated", NULL), strtod(mq, NULL)};
      for (int q = 0; q < 4; q++) if (v[q] > py) py = v[q];
      if (results_num(&t, r, "event", NULL) > xmax) xmax = results_num(&t, r, "event", NULL);
    }
    fputs("\n\n", d);
    /* where it died: its run row's first_oom_event, at the last reserved it sampled */
    const struct rf_cell *cc = w >= 0 ? rf_cell_at(f, w, sl[j]) : NULL;
    double oev = -1, ores = 0;
    if (cc && cc->run >= 0 && !strcmp(results_get(&f->runs, cc->run, "status"), "oom") && results_get(&f->runs, cc->run, "first_oom_event")[0]) {
      oev = results_num(&f->runs, cc->run, "first_oom_event", NULL);
      for (int r = 0; r < t.nrows; r++) if (sidx[r] == sl[j]) ores = results_num(&t, r, "reserved", NULL);
      if (oev > xmax) xmax = oev;
    }
    fprintf(m, "oomev[%d] = %.0f\noomres[%d] = %.0f\n", j + 1, oev, j + 1, ores);
    fprintf(m, "peakreq[%d] = %.0f\npeakres[%d] = %.0f\npanelmax[%d] = %.0f\nnotes[%d] = ", j + 1, pq, j + 1, pr, j + 1, py, j + 1);
    char note[128] = "";
    if (fabs(leak) >= 1) {
      double a = fabs(leak);
      snprintf(note, sizeof note, "%s %.*f %s per iteration", leak > 0 ? "leaks" : "shrinks",
               a >= 1048576 ? 1 : a >= 1024 ? 1 : 0, a >= 1048576 ? a / 1048576 : a >= 1024 ? a / 1024 : a,
               a >= 1048576 ? "MiB" : a >= 1024 ? "KiB" : "B");
    }
    pd_gq(m, note);
    fputc('\n', m);
    if (py > ymax) ymax = py;
  }
  pd_meta_strategies(m, f, sl, n);
  if (cap > ymax) ymax = cap;   /* the limit is in the picture */
  double div, xdiv = xmax >= 1e7 ? 1e6 : xmax >= 1e4 ? 1e3 : 1;
  const char *unit = unit_for(ymax, &div);
  limit_meta(m, cap, caplo, caphi, inferred);
  double leakdiv = leakmax >= 1048576 ? 1048576 : leakmax >= 1024 ? 1024 : 1;
  fprintf(m, "unit = \"%s\"\ndiv = %.1f\nymax = %g\nxmax = %g\nxdiv = %g\nxsuffix = \"%s\"\nleakdiv = %g\nleakunit = \"%s\"\nworkload = ",
          unit, div, ymax, xmax, xdiv, xdiv == 1e6 ? "M" : xdiv == 1e3 ? "k" : "", leakdiv,
          leakdiv == 1048576 ? "MiB" : leakdiv == 1024 ? "KiB" : "B");
  pd_gq(m, wl);
  fputc('\n', m);
  fclose(d);
  fclose(m);
  fprintf(list, "timeline %s\n", label);
  results_free(&t);
  free(sidx);
  free(sl);
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int pd_timelines(struct run_folder *f, const char *dir, FILE *list, char *err, size_t errlen) {
  DIR *dd = opendir(f->dir);
  if (!dd) return 0;
  char **names = NULL;
  int n = 0, rc = 0;
  struct dirent *e;
  while ((e = readdir(dd))) {
    size_t len = strlen(e->d_name);
    if (strncmp(e->d_name, "timeline-", 9) || len < 14 || strcmp(e->d_name + len - 4, ".csv")) continue;
    names = realloc(names, (size_t)(n + 1) * sizeof *names);
    if (!names || !(names[n] = strdup(e->d_name))) abort();
    n++;
  }
  closedir(dd);
  if (n) qsort(names, (size_t)n, sizeof *names, by_name);
  for (int i = 0; i < n; i++) {
    if (!rc) rc = one_timeline(f, dir, names[i], list, err, errlen);
    free(names[i]);
  }
  free(names);
  return rc;
}

static int one_capsweep(struct run_folder *f, int w, const char *dir, FILE *list, char *err, size_t errlen) {
  int *sl = malloc(((size_t)f->ns_cells + 1) * sizeof *sl), n = 0;
  if (!sl) abort();
  for (int s = 0; s < f->ns_cells; s++) {
    const struct rf_cell *c = rf_cell_at(f, w, s);
    int any = 0;
    for (int i = 0; c && i < c->nsweep; i++) any |= c->sweep[i].reserved[0] != 0;
    if (any) sl[n++] = s;
  }
  if (!n) { free(sl); return 0; }
  char sname[700], label[800];
  pd_safe(f->workload[w], sname, sizeof sname);
  snprintf(label, sizeof label, "capsweep-%s", sname);
  FILE *d = pd_open(dir, label, ".dat", err, errlen), *m = d ? pd_open(dir, label, ".meta.gp", err, errlen) : NULL;
  if (!m) { if (d) fclose(d); free(sl); return 2; }
  double ylo = INFINITY, yhi = 0, xlo = INFINITY, xhi = 0, preq = 0;
  for (int j = 0; j < n; j++) {
    const struct rf_cell *c = rf_cell_at(f, w, sl[j]);
    fprintf(d, "# %s: every cap (cap_x, peak_reserved, completed)\n", f->strategy[sl[j]]);
    for (int i = 0; i < c->nsweep; i++) {
      if (!c->sweep[i].reserved[0]) continue;
      fprintf(d, "%g\t%s\t%d\n", c->sweep[i].x, c->sweep[i].reserved, c->sweep[i].completed);
      if (c->sweep[i].x < xlo) xlo = c->sweep[i].x;
      if (c->sweep[i].x > xhi) xhi = c->sweep[i].x;
    }
    fprintf(d, "\n\n# %s: the caps that completed (cap_x, peak_reserved)\n", f->strategy[sl[j]]);
    for (int i = 0; i < c->nsweep; i++) {
      if (!c->sweep[i].reserved[0] || !c->sweep[i].completed) continue;
      double r = strtod(c->sweep[i].reserved, NULL);
      fprintf(d, "%g\t%s\n", c->sweep[i].x, c->sweep[i].reserved);
      if (r < ylo) ylo = r;
      if (r > yhi) yhi = r;
    }
    fputs("\n\n", d);
  }
  /* peak requested: the workload's largest in runs.csv, else in capsweep.csv */
  for (int r = 0; r < f->runs.nrows; r++) {
    char wl[600];
    rf_workload_label(&f->runs, r, wl, sizeof wl);
    if (!strcmp(wl, f->workload[w]) && results_num(&f->runs, r, "peak_requested", NULL) > preq) preq = results_num(&f->runs, r, "peak_requested", NULL);
  }
  for (int r = 0; preq == 0 && r < f->capsweep.nrows; r++) {
    char wl[600];
    rf_workload_label(&f->capsweep, r, wl, sizeof wl);
    if (!strcmp(wl, f->workload[w]) && results_num(&f->capsweep, r, "peak_requested", NULL) > preq) preq = results_num(&f->capsweep, r, "peak_requested", NULL);
  }
  if (isinf(ylo)) ylo = preq * xlo, yhi = preq * xhi;
  if (preq * xhi > yhi) yhi = preq * xhi;
  if (preq * xlo < ylo) ylo = preq * xlo;
  double div;
  const char *unit = unit_for(yhi, &div);
  double cap, caplo, caphi;
  int inferred;
  limit_of(f, w, &cap, &caplo, &caphi, &inferred);
  pd_meta_strategies(m, f, sl, n);
  limit_meta(m, preq > 0 ? cap : 0, caplo, caphi, inferred);
  fprintf(m, "ymin = %.0f\nunit = \"%s\"\ndiv = %.1f\nymax = %g\nxmin = %g\nxmax = %g\npreq = %.0f\nworkload = ", ylo, unit, div, yhi, xlo, xhi, preq);
  pd_gq(m, f->workload[w]);
  fputc('\n', m);
  fclose(d);
  fclose(m);
  fprintf(list, "capsweep %s\n", label);
  free(sl);
  return 0;
}

int pd_capsweeps(struct run_folder *f, const char *dir, FILE *list, char *err, size_t errlen) {
  for (int w = 0; w < f->nw; w++)
    if (one_capsweep(f, w, dir, list, err, errlen)) return 2;
  return 0;
}
