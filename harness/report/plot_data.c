/* plot_data.c - the gnuplot data of the plots that span every workload (overhead, mincap,
 * latency, tradeoff), the device name, and the list of plots to draw (see plot_data.h). */
#include "status.h"
#include "plot_data.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tradeoff.h"
#include "report_cells.h"
#include "report_text.h"

FILE *pd_open(const char *dir, const char *name, const char *ext, char *err, size_t errlen) {
  char path[1400];
  snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
  FILE *o = fopen(path, "w");
  if (!o) snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
  return o;
}

void pd_gq(FILE *o, const char *s) {
  fputc('"', o);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', o);
    fputc(*s, o);
  }
  fputc('"', o);
}

void pd_safe(const char *s, char *out, size_t len) {
  size_t k = 0;
  for (; *s && k + 1 < len; s++) out[k++] = (strchr("._-", *s) || (*s >= '0' && *s <= '9') || ((*s | 32) >= 'a' && (*s | 32) <= 'z')) ? *s : '_';
  out[k] = 0;
}

void pd_meta_strategies(FILE *m, const struct run_folder *f, const int *list, int n) {
  int k = n > 0 ? n : 1;
  fprintf(m, "array names[%d]\narray colors[%d]\narray isref[%d]\n", k, k, k);
  for (int i = 0; i < n; i++) {
    fprintf(m, "names[%d] = ", i + 1);
    pd_gq(m, f->strategy[list[i]]);
    fprintf(m, "\ncolors[%d] = %d\nisref[%d] = %d\n", i + 1, list[i] + 1, i + 1, rf_is_reference(f->strategy[list[i]]));
  }
  fprintf(m, "n = %d\n", n);
}

/* the uncapped row's field if it completed, else "" */
static const char *ok_value(const struct run_folder *f, int w, int s, const char *col) {
  const struct rf_cell *c = rf_cell_at(f, w, s);
  if (!c || c->run < 0 || !status_is(results_get(&f->runs, c->run, "status"), "ok")) return "";
  return results_get(&f->runs, c->run, col);
}
static const char *mincap_value(const struct run_folder *f, int w, int s, const char *col) {
  (void)col;
  const struct rf_cell *c = rf_cell_at(f, w, s);
  return c && c->mincap >= 0 ? results_get(&f->mincap, c->mincap, "mincap_x") : "";
}

/* the row ran and did not complete (out of memory, or an error): drawn as failed */
static int failed_run(const struct run_folder *f, int w, int s) {
  return rc_has_run(f, w, s) && !rc_ok(f, w, s) && strncmp(rc_value(f, w, s, "status"), "skipped", 7);
}

/* the limit the workload's rows ran under (0: none) */
static double workload_cap(const struct run_folder *f, int w) {
  for (int s = 0; s < f->ns_cells; s++)
    if (rc_has_run(f, w, s) && rt_num(rc_value(f, w, s, "cap_bytes")) > 0) return rt_num(rc_value(f, w, s, "cap_bytes"));
  return 0;
}

/* a row per workload (those with a value or a failed run when fails), a column per
 * strategy (those with any); the labels carry the limit a capped workload ran under;
 * index 1: the failed cells (row, strategy's column, 1-based) */
static int write_dots(struct run_folder *f, const char *dir, FILE *list, const char *name,
                      const char *(*val)(const struct run_folder *, int, int, const char *), const char *col,
                      const char *xlab, const char *title, int fails, char *err, size_t errlen) {
  int *sl = malloc(((size_t)f->ns_cells + 1) * sizeof *sl), n = 0;
  if (!sl) abort();
  for (int s = 0; s < f->ns_cells; s++)
    for (int w = 0; w < f->nw; w++) if (val(f, w, s, col)[0] || (fails && failed_run(f, w, s))) { sl[n++] = s; break; }
  if (!n) { free(sl); return 0; }
  FILE *d = pd_open(dir, name, ".dat", err, errlen), *m = d ? pd_open(dir, name, ".meta.gp", err, errlen) : NULL;
  if (!m) { if (d) fclose(d); free(sl); return 2; }
  fputs("# workload", d);
  for (int j = 0; j < n; j++) fprintf(d, "\t%s", f->strategy[sl[j]]);
  fputc('\n', d);
  double lo = INFINITY, hi = -INFINITY;
  int rows = 0, labw = 0, capped = 0, nfail = 0;
  char lab[800], cb[64];
  for (int w = 0; w < f->nw; w++) {
    int any = 0;
    for (int j = 0; j < n; j++) any |= val(f, w, sl[j], col)[0] != 0 || (fails && failed_run(f, w, sl[j]));
    if (!any) continue;
    double cap = fails ? workload_cap(f, w) : 0;
    if (cap > 0) { snprintf(lab, sizeof lab, "%s (limit %s)", f->workload[w], rt_bytes_d(cap, cb, sizeof cb)); capped++; }
    else snprintf(lab, sizeof lab, "%s", f->workload[w]);
    fputs(lab, d);
    for (int j = 0; j < n; j++) {
      const char *v = val(f, w, sl[j], col);
      fprintf(d, "\t%s", v[0] ? v : "-");
      if (v[0]) { double x = strtod(v, NULL); if (x < lo) lo = x; if (x > hi) hi = x; }
    }
    fputc('\n', d);
    rows++;
    if ((int)strlen(lab) > labw) labw = (int)strlen(lab);
  }
  fputs("\n\n# failed: row, strategy column\n", d);
  for (int w = 0, row = 0; fails && w < f->nw; w++) {
    int any = 0;
    for (int j = 0; j < n; j++) any |= val(f, w, sl[j], col)[0] != 0 || failed_run(f, w, sl[j]);
    if (!any) continue;
    row++;
    for (int j = 0; j < n; j++) if (failed_run(f, w, sl[j])) { fprintf(d, "%d\t%d\n", row, j + 1); nfail++; }
  }
  if (!nfail) fputs("-100\t1\n", d);   /* an index gnuplot can read, off the plot */
  /* index 2: the job's limit of a capped workload, as a multiple of its peak requested */
  fputs("\n\n# limit: row, cap / peak requested\n", d);
  int nlim = 0;
  for (int w = 0, row = 0; w < f->nw; w++) {
    int any = 0;
    for (int j = 0; j < n; j++) any |= val(f, w, sl[j], col)[0] != 0 || (fails && failed_run(f, w, sl[j]));
    if (!any) continue;
    row++;
    double cap = workload_cap(f, w), preq = 0;
    for (int s = 0; s < f->ns_cells; s++)
      if (rc_ok(f, w, s) && rt_num(rc_value(f, w, s, "peak_requested")) > preq) preq = rt_num(rc_value(f, w, s, "peak_requested"));
    if (cap <= 0 || preq <= 0) continue;
    fprintf(d, "%d\t%g\n", row, cap / preq);
    if (cap / preq > hi) hi = cap / preq;
    nlim++;
  }
  if (!nlim) fputs("-100\t1\n", d);
  if (isinf(lo)) lo = hi = 1;
  pd_meta_strategies(m, f, sl, n);
  fprintf(m, "nrows = %d\nxmin = %g\nxmax = %g\nlabel_chars = %d\nnfail = %d\nnlimit = %d\nxlab = ", rows, lo, hi, labw, nfail, nlim);
  pd_gq(m, xlab);
  fputs("\nptitle = ", m);
  char t[600];
  snprintf(t, sizeof t, "%s%s", title, !fails ? "" : capped == 0 ? " (uncapped runs)" : capped == rows ? " (each workload under its job's limit)" :
           " (uncapped, or under the job's limit the label gives)");
  pd_gq(m, t);
  fputc('\n', m);
  fclose(d);
  fclose(m);
  fprintf(list, "dots %s\n", name);
  free(sl);
  return 0;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* per strategy: median, lowest and highest over its workloads of mean ns/op, p50, p99,
 * and how many workloads. The mean comes from the replay loop's clock and includes what
 * ns_per_op_includes names (a bench run writes its timeline in the same loop) and any
 * time the host took the core away; p50/p99 come from calls timed alone. So the mean is
 * drawn only from rows whose ns_per_op_includes is empty ("-" when a strategy has none),
 * or it could stand above the p99 of the same calls. */
static int write_latency(struct run_folder *f, const char *dir, FILE *list, char *err, size_t errlen) {
  static const char *cols[3] = {"ns_per_op", "p50_ns", "p99_ns"};
  double *v = malloc(((size_t)f->nw + 1) * sizeof *v);
  int *sl = malloc(((size_t)f->ns_cells + 1) * sizeof *sl), n = 0, nlo = 1 << 30, nhi = 0, nomean = 0, anymean = 0;
  if (!v || !sl) abort();
  FILE *d = NULL, *m = NULL;
  double lo = INFINITY, hi = 0;
  for (int s = 0; s < f->ns_cells; s++) {
    int cnt = 0;
    for (int w = 0; w < f->nw; w++) cnt += ok_value(f, w, s, "ns_per_op")[0] && ok_value(f, w, s, "p50_ns")[0] && ok_value(f, w, s, "p99_ns")[0];
    if (!cnt) continue;
    if (!d) {
      d = pd_open(dir, "latency", ".dat", err, errlen);
      if (!d) { free(v); free(sl); return 2; }
      fputs("# strategy\tmean ns/op\tlo\thi\tp50\tlo\thi\tp99\tlo\thi\tworkloads\n", d);
    }
    fputs(f->strategy[s], d);
    for (int c = 0; c < 3; c++) {
      int k = 0;
      for (int w = 0; w < f->nw; w++)
        if (ok_value(f, w, s, "ns_per_op")[0] && ok_value(f, w, s, "p50_ns")[0] && ok_value(f, w, s, "p99_ns")[0] &&
            (c > 0 || !ok_value(f, w, s, "ns_per_op_includes")[0]))
          v[k++] = strtod(ok_value(f, w, s, cols[c]), NULL);
      if (!k) { fputs("\t-\t-\t-", d); nomean = 1; continue; }
      if (c == 0) anymean = 1;
      qsort(v, (size_t)k, sizeof *v, cmp_d);
      fprintf(d, "\t%g\t%g\t%g", k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2, v[0], v[k - 1]);
      if (v[k - 1] > hi) hi = v[k - 1];
      if (v[0] > 0 && v[0] < lo) lo = v[0];
    }
    fprintf(d, "\t%d\n", cnt);
    sl[n++] = s;
    if (cnt > nhi) nhi = cnt;
    if (cnt < nlo) nlo = cnt;
  }
  free(v);
  if (!n) { free(sl); return 0; }
  fclose(d);
  m = pd_open(dir, "latency", ".meta.gp", err, errlen);
  if (!m) { free(sl); return 2; }
  pd_meta_strategies(m, f, sl, n);
  fprintf(m, "ymin = %g\nymax = %g\nnwlo = %d\nnwhi = %d\nhasmean = %d\nsomemean = %d\n", isinf(lo) ? 1 : lo, hi, nlo, nhi, anymean,
          anymean && nomean);
  fclose(m);
  fputs("latency latency\n", list);
  free(sl);
  return 0;
}

/* a block per strategy: driver ns per 1000 calls, overhead, workload, its index (the
 * marker: one shape per workload, one colour per strategy) */
static int write_tradeoff(struct run_folder *f, const char *dir, FILE *list, char *err, size_t errlen) {
  int *sl = malloc(((size_t)f->ns_cells + 1) * sizeof *sl), n = 0;
  if (!sl) abort();
  double x, y, xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
  FILE *d = NULL;
  char zero[1024] = "";
  for (int s = 0; s < f->ns_cells; s++) {
    int cnt = 0, zeros = 0;
    for (int w = 0; w < f->nw; w++) if (tradeoff_point(f, w, s, &x, &y)) { if (x > 0) cnt++; else zeros++; }
    if (zeros && !cnt) snprintf(zero + strlen(zero), sizeof zero - strlen(zero), "%s%s", zero[0] ? ", " : "", f->strategy[s]);
    if (!cnt) continue;
    if (!d && !(d = pd_open(dir, "tradeoff", ".dat", err, errlen))) { free(sl); return 2; }
    fprintf(d, "# %s\n", f->strategy[s]);
    for (int w = 0; w < f->nw; w++) {
      if (!tradeoff_point(f, w, s, &x, &y) || x <= 0) continue;
      fprintf(d, "%g\t%g\t%s\t%d\n", x, y, f->workload[w], w + 1);
      if (x < xlo) xlo = x;
      if (x > xhi) xhi = x;
      if (y < ylo) ylo = y;
      if (y > yhi) yhi = y;
    }
    fputs("\n\n", d);
    sl[n++] = s;
  }
  if (!n) { free(sl); return 0; }
  fclose(d);
  FILE *m = pd_open(dir, "tradeoff", ".meta.gp", err, errlen);
  if (!m) { free(sl); return 2; }
  pd_meta_strategies(m, f, sl, n);
  fprintf(m, "nw = %d\narray wnames[%d]\n", f->nw, f->nw > 0 ? f->nw : 1);
  for (int w = 0; w < f->nw; w++) { fprintf(m, "wnames[%d] = ", w + 1); pd_gq(m, f->workload[w]); fputc('\n', m); }
  fprintf(m, "xmin = %g\nxmax = %g\nymin = %g\nymax = %g\nnodriver = ", xlo, xhi, ylo, yhi);
  pd_gq(m, zero);
  fputc('\n', m);
  fclose(m);
  fputs("tradeoff tradeoff\n", list);
  free(sl);
  return 0;
}

int plot_data_write(struct run_folder *f, const char *dir, char *err, size_t errlen) {
  FILE *list = pd_open(dir, "plots", ".txt", err, errlen);
  if (!list) return 2;
  FILE *dev = pd_open(dir, "device", ".meta.gp", err, errlen);
  if (!dev) { fclose(list); return 2; }
  fputs("device_name = ", dev);
  pd_gq(dev, f->device_name);
  fputc('\n', dev);
  fclose(dev);
  int rc = write_dots(f, dir, list, "overhead", ok_value, "overhead", "peak reserved / peak requested (1 = no overhead; lower is better)",
                      "How much memory does each strategy hold beyond what the program asked for?", 1, err, errlen);
  if (!rc) rc = write_dots(f, dir, list, "mincap", mincap_value, "mincap_x", "smallest cap that completes / peak requested (lower is better)",
                           "How much memory does each strategy need to finish? (smallest cap that completes)", 0, err, errlen);
  if (!rc) rc = write_latency(f, dir, list, err, errlen);
  if (!rc) rc = write_tradeoff(f, dir, list, err, errlen);
  if (!rc) rc = pd_timelines(f, dir, list, err, errlen);
  if (!rc) rc = pd_capsweeps(f, dir, list, err, errlen);
  fclose(list);
  return rc;
}
