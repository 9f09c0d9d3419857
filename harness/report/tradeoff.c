/* tradeoff.c - memory against driver time (see tradeoff.h), and its table in report.md:
 * per strategy, over the workloads, the median and range of both. */
#include "status.h"
#include "tradeoff.h"
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "report_text.h"
#include "report_cells.h"

#define B 256

int tradeoff_point(const struct run_folder *f, int w, int s, double *x, double *y) {
  const struct rf_cell *c = rf_cell_at(f, w, s);
  if (!c || c->run < 0 || !status_is(results_get(&f->runs, c->run, "status"), "ok")) return 0;
  int ok1, ok2, ok3, ok4;
  double drv = results_num(&f->runs, c->run, "modeled_driver_ns", &ok1);
  double calls = results_num(&f->runs, c->run, "allocs", &ok2) + results_num(&f->runs, c->run, "frees", &ok3);
  *y = results_num(&f->runs, c->run, "overhead", &ok4);
  if (!ok1 || !ok2 || !ok3 || !ok4 || calls <= 0) return 0;
  *x = drv * 1000.0 / calls;
  return 1;
}

/* a strategy whose figure on some workload is a model's (model_err > 0): a range, not ranked */
static int modelled(const struct run_folder *f, int s) {
  for (int w = 0; w < f->nw; w++) if (rc_model_err(f, w, s) > 0) return 1;
  return 0;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *ns_text(double ns, char *buf, size_t len) {
  if (ns < 1000) snprintf(buf, len, "%.0f ns", ns);
  else if (ns < 1e6) snprintf(buf, len, "%.1f µs", ns / 1e3);
  else snprintf(buf, len, "%.1f ms", ns / 1e6);
  return buf;
}

void report_tradeoff(struct run_folder *f, FILE *o, const char *fmt, const struct report_images *im) {
  char a[B], b[B], c[B], d[B], e[B], g[B], h[B], name[64];
  double *xs = malloc(((size_t)f->nw + 1) * sizeof *xs), *ys = malloc(((size_t)f->nw + 1) * sizeof *ys);
  if (!xs || !ys) abort();
  int any = 0;
  for (int s = 0; s < f->ns_cells && !any; s++)
    for (int w = 0; w < f->nw && !any; w++) any = tradeoff_point(f, w, s, xs, ys);
  if (!any) { free(xs); free(ys); return; }
  fputs("## Memory against driver time\n\n", o);
  fputs("Memory held beyond what the program asked for against time in device calls (cudaMalloc/cudaFree, "
        "cuMemCreate/cuMemMap/cuMemUnmap; modeled on sim, measured on a GPU), per strategy over the workloads "
        "that completed: overhead = peak reserved / peak requested, driver time per 1000 alloc/free calls. "
        "Lower-left is better.", o);
  /* the two ends, among the allocators one can use (PyTorch's, other frameworks') */
  int lo_mem = -1, lo_drv = -1;
  double lo_mem_y = 0, lo_mem_x = 0, lo_drv_y = 0, lo_drv_x = 0;
  for (int s = 0; s < f->ns_cells; s++) {
    enum rc_group g = rc_group_of(f->strategy[s]);
    if ((g != RC_PYTORCH && g != RC_OTHER) || modelled(f, s)) continue;   /* a modelled figure (a range) is not ranked */
    int n = 0;
    for (int w = 0; w < f->nw; w++) if (tradeoff_point(f, w, s, &xs[n], &ys[n])) n++;
    if (!n) continue;
    double my = median(ys, n), mx = median(xs, n);
    if (lo_mem < 0 || my < lo_mem_y) { lo_mem = s; lo_mem_y = my; lo_mem_x = mx; }
    if (lo_drv < 0 || mx < lo_drv_x) { lo_drv = s; lo_drv_x = mx; lo_drv_y = my; }
  }
  if (lo_mem >= 0 && lo_drv >= 0 && lo_mem != lo_drv)
    fprintf(o, " The least memory, %s at a median %s, costs %s of driver time per 1000 calls; the least driver time, %s at %s, holds %s.",
            rt_md(f->strategy[lo_mem], a, B), rt_x_d(lo_mem_y, b, B), ns_text(lo_mem_x, c, B), rt_md(f->strategy[lo_drv], d, B),
            ns_text(lo_drv_x, e, B), rt_x_d(lo_drv_y, g, B));
  else if (lo_mem >= 0)
    fprintf(o, " %s holds the least memory (median %s) and spends the least driver time (%s per 1000 calls).",
            rt_md(f->strategy[lo_mem], a, B), rt_x_d(lo_mem_y, b, B), ns_text(lo_mem_x, c, B));
  for (int s = 0; s < f->ns_cells; s++)
    if (modelled(f, s)) { fprintf(o, " %s's figures are a model's (a range, model_err): not ranked here.", rt_md(f->strategy[s], a, B)); }
  fputs("\n\n", o);
  snprintf(name, sizeof name, "tradeoff.%s", fmt);
  if (report_has_image(im, name)) fprintf(o, "![overhead against driver time per strategy and workload](plots/%s)\n\n", name);
  fputs("| strategy | workloads | overhead, median | overhead, range | driver time per 1000 calls, median | range |\n", o);
  fputs("|---|--:|--:|--:|--:|--:|\n", o);
  for (int s = 0; s < f->ns_cells; s++) {
    int n = 0;
    for (int w = 0; w < f->nw; w++) if (tradeoff_point(f, w, s, &xs[n], &ys[n])) n++;
    if (!n) continue;
    double ymed = median(ys, n), ylo = ys[0], yhi = ys[n - 1];
    double xmed = median(xs, n), xlo = xs[0], xhi = xs[n - 1], err = 0;
    for (int w = 0; w < f->nw; w++) if (rc_model_err(f, w, s) > err) err = rc_model_err(f, w, s);
    char em[48] = "";
    if (err > 0) snprintf(em, sizeof em, " (model ±%.0f%%)", err * 100);
    fprintf(o, "| %s%s | %d | %s%s | %s - %s | %s | %s - %s |\n", rt_md(f->strategy[s], a, B),
            rf_is_reference(f->strategy[s]) ? (!strncmp(f->strategy[s], "raw", 3) ? " (baseline)" : " (offline reference)") : "",
            n, rt_x_d(ymed, b, B), em, rt_x_d(ylo, c, B), rt_x_d(yhi, d, B), ns_text(xmed, e, B), ns_text(xlo, g, B), ns_text(xhi, h, B));
  }
  fputc('\n', o);
  free(xs);
  free(ys);
}
