/* report_cells.c - one workload x strategy cell as report.md speaks of it (see
 * report_cells.h). */
#include "status.h"
#include "report_cells.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "replay_open.h"
#include "report_text.h"
#include "alloc_conf.h"
#include "params.h"

const char *rc_value(const struct run_folder *f, int w, int s, const char *col) {
  const struct rf_cell *c = rf_cell_at(f, w, s);
  return c && c->run >= 0 ? results_get(&f->runs, c->run, col) : "";
}
int rc_has_run(const struct run_folder *f, int w, int s) {
  const struct rf_cell *c = rf_cell_at(f, w, s);
  return c && c->run >= 0;
}
int rc_ok(const struct run_folder *f, int w, int s) { return rc_has_run(f, w, s) && status_is(rc_value(f, w, s, "status"), "ok"); }
int rc_oom(const struct run_folder *f, int w, int s) { return rc_has_run(f, w, s) && !strcmp(rc_value(f, w, s, "status"), "oom"); }
const char *rc_mincap_x(const struct run_folder *f, int w, int s) {
  const struct rf_cell *c = rf_cell_at(f, w, s);
  return c && c->mincap >= 0 ? results_get(&f->mincap, c->mincap, "mincap_x") : NULL;
}

static int is(const char *strategy, const char *name) {
  size_t n = strcspn(strategy, ":");
  return n == strlen(name) && !strncmp(strategy, name, n);
}

enum rc_group rc_group_of(const char *s) {
  if (is(s, "caching") || is(s, "expandable") || is(s, "async")) return RC_PYTORCH;
  if (is(s, "stitch")) return RC_RESEARCH;
  if (is(s, "raw") || is(s, "oracle")) return RC_REFERENCE;
  return RC_OTHER;
}

const char *rc_group_title(enum rc_group g) {
  switch (g) {
  case RC_PYTORCH: return "PyTorch's settings (PYTORCH_CUDA_ALLOC_CONF: what you can set today)";
  case RC_OTHER: return "Other frameworks' allocators (not in PyTorch)";
  case RC_RESEARCH: return "Research designs (not in any framework you can switch on)";
  default: return "References (bounds, not allocators)";
  }
}

const char *rc_what(const char *s) {
  static const char *const t[][2] = {
    {"caching", "PyTorch's default"}, {"expandable", "PyTorch, expandable_segments:True"},
    {"async", "PyTorch, backend:cudaMallocAsync"}, {"bfc", "XLA/JAX BFC"}, {"cupy", "CuPy MemoryPool"},
    {"pool", "RMM pool"}, {"stitch", "GMLake's stitching, research"}, {"oracle", "offline lower bound"},
    {"raw", "one cudaMalloc per request"}};
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) if (is(s, t[i][0])) return t[i][1];
  return "";
}

const char *rc_alloc_conf(const struct run_folder *f, int w, int s) {
  const char *st = f->strategy[s];
  if (rc_group_of(st) != RC_PYTORCH) return NULL;
  const char *conf = rc_value(f, w, s, "alloc_conf");
  if (conf[0]) return conf;
  if (strchr(st, ':')) {   /* a row without the column: the string from its parameters */
    static char buf[640];
    char name[64], err[256];
    struct params p;
    if (!params_parse_spec(st, name, sizeof name, &p, err) && !alloc_conf_format(name, &p, buf, sizeof buf)) return buf;
  }
  if (is(st, "expandable")) return "expandable_segments:True";
  if (is(st, "async")) return "backend:cudaMallocAsync";
  return "";
}

double rc_model_err(const struct run_folder *f, int w, int s) {
  double e = fabs(rt_num(rc_value(f, w, s, "model_err")));
  return isfinite(e) ? e : 0;
}

void rc_range(const struct run_folder *f, int w, int s, double *lo, double *hi) {
  double r = rt_num(rc_value(f, w, s, "peak_reserved")), e = rc_model_err(f, w, s), q = rt_num(rc_value(f, w, s, "peak_requested"));
  *lo = r * (1 - e);
  *hi = r * (1 + e);
  if (*lo < q) *lo = q < r ? q : r;
}

int rc_within_err(double a, double ea, double b, double eb) {
  double tol = fmax(ea * fabs(a), eb * fabs(b));
  return tol > 0 && fabs(a - b) <= tol;
}

/* the workload's events: count them all, and note the size of each asked alloc */
static void walk(struct run_folder *f, int w) {
  int row = -1;
  for (int s = 0; s < f->ns_cells && row < 0; s++) if (rc_has_run(f, w, s)) row = rf_cell_at(f, w, s)->run;
  if (row < 0) return;
  const char *trace = results_get(&f->runs, row, "trace"), *spec = results_get(&f->runs, row, "workload");
  struct run_spec rs = {.trace = trace[0] ? trace : NULL, .workload = trace[0] ? NULL : spec, .trace_device = -1, .world = 1,
                        .seed = results_u64(&f->runs, row, "seed", NULL)};
  if (!rs.seed) rs.seed = 1;
  char err[FB_ERRLEN];
  struct workload wl;
  if (replay_open_workload(&rs, &wl, SIM_TOTAL_DEFAULT, err)) return;
  struct event ev;
  int64_t i = 0;
  while (workload_next(&wl, &ev, err) == 1) {
    for (int s = 0; s < f->ns_cells; s++) {
      struct rf_cell *c = (struct rf_cell *)rf_cell_at(f, w, s);
      if (!c || c->run < 0 || !rc_oom(f, w, s)) continue;
      int ok;
      int64_t at = (int64_t)results_num(&f->runs, c->run, "first_oom_event", &ok);
      if (ok && at == i && ev.op == OP_ALLOC) { c->oom_request = ev.size; c->oom_request_known = 1; }
    }
    i++;
  }
  workload_close(&wl);
  f->wl_events[w] = i;
}

void rc_oom_lookup(struct run_folder *f) {
  if (f->oom_looked_up) return;
  f->oom_looked_up = 1;
  f->wl_events = malloc(((size_t)f->nw + 1) * sizeof *f->wl_events);
  if (!f->wl_events) abort();
  for (int w = 0; w < f->nw; w++) {
    f->wl_events[w] = -1;
    int any = 0;
    for (int s = 0; s < f->ns_cells; s++) any |= rc_oom(f, w, s) && rc_value(f, w, s, "first_oom_event")[0];
    if (any) walk(f, w);
  }
}

const char *rc_oom_text(const struct run_folder *f, int w, int s, char *buf, size_t len) {
  char a[64];
  const char *ev = rc_value(f, w, s, "first_oom_event");
  if (!ev[0]) { snprintf(buf, len, "OOM"); return buf; }
  double at = rt_num(ev), total = f->wl_events && f->wl_events[w] > 0 ? (double)f->wl_events[w] : 0;
  for (int t = 0; total <= 0 && t < f->ns_cells; t++)   /* else the longest row that completed */
    if (rc_ok(f, w, t) && rt_num(rc_value(f, w, t, "events")) > total) total = rt_num(rc_value(f, w, t, "events"));
  int k = snprintf(buf, len, "OOM at event %.0f", at);
  if (total > 0 && k > 0 && (size_t)k < len) {
    double pct = at * 100 / total;
    k += snprintf(buf + k, len - (size_t)k, pct >= 99.5 && at < total - 1 ? " (99%% of the run)" : " (%.0f%% of the run)", pct);
  }
  const struct rf_cell *c = rf_cell_at(f, w, s);
  if (c && c->oom_request_known && k > 0 && (size_t)k < len)
    snprintf(buf + k, len - (size_t)k, ", a %s request", rt_bytes_d((double)c->oom_request, a, sizeof a));
  return buf;
}
