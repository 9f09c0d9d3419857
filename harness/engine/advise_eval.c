/* advise_eval.c - one allocator setting judged on every variation of the job (see
 * advise.h): the variations replayed at once, one per thread (pthreads, as many as there
 * are cores), and folded into the candidate's worst case; for a setting that does not fit
 * everywhere, or when asked, the smallest limit it completes under (mincap, per variation). */
#include "advise.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mincap.h"

enum task { T_REPLAY, T_MINCAP };

struct pool {
  const struct run_spec *base;
  const struct variation_set *vs;
  const char *spec;
  enum task task;
  const unsigned char *only;     /* NULL: every variation; else those with only[v] */
  struct run_result *rs;         /* one per variation */
  int *cls;                      /* one per variation */
  int threads;
};

struct worker { struct pool *p; int t; };

static void one(struct pool *p, int v) {
  struct run_spec rs = *p->base;
  rs.events = &p->vs->v[v];
  rs.allocator = p->spec;
  run_result_init(&p->rs[v]);
  if (p->task == T_MINCAP) p->cls[v] = mincap_find(&rs, ADVISE_NEED_PRECISION, 0, &p->rs[v], NULL);
  else p->cls[v] = replay_run(&rs, &p->rs[v]);
}

static void *work(void *arg) {
  struct worker *w = arg;
  for (int v = w->t; v < w->p->vs->n; v += w->p->threads)
    if (!w->p->only || w->p->only[v]) one(w->p, v);
  return NULL;
}

/* every variation (of `only`) replayed, p->threads at a time; 0, or -1 (host memory) */
static int run_all(struct pool *p) {
  int n = p->vs->n, t = p->threads < 1 ? 1 : p->threads > n ? n : p->threads;
  p->threads = t;
  pthread_t tid[64];
  struct worker w[64];
  if (t > 64) t = p->threads = 64;
  int started = 0;
  for (int i = 1; i < t; i++) {
    w[i] = (struct worker){p, i};
    if (pthread_create(&tid[i], NULL, work, &w[i])) break;
    started = i;
  }
  if (started < t - 1) {                            /* could not start them all: the rest here, in turn */
    for (int i = 1; i <= started; i++) pthread_join(tid[i], NULL);
    p->threads = 1;
    w[0] = (struct worker){p, 0};
    work(&w[0]);
    return 0;
  }
  w[0] = (struct worker){p, 0};
  work(&w[0]);
  for (int i = 1; i < t; i++) pthread_join(tid[i], NULL);
  return 0;
}

static int pool_alloc(struct pool *p, int n) {
  p->rs = calloc((size_t)n, sizeof *p->rs);
  p->cls = calloc((size_t)n, sizeof *p->cls);
  return p->rs && p->cls ? 0 : -1;
}

static void pool_free(struct pool *p) { free(p->rs); free(p->cls); }

static int worst_class(const struct pool *p, const char *spec, char *err) {
  int worst = 0;
  for (int v = 0; v < p->vs->n; v++)
    if ((!p->only || p->only[v]) && p->cls[v] > worst) {
      worst = p->cls[v];
      snprintf(err, FB_ERRLEN, "%.200s (variation %d): %.280s", spec, v, p->rs[v].status);
    }
  return worst;
}

/* the variations a setting is judged on: all but those no setting can fit */
static unsigned char *judged(const struct variation_set *vs) {
  unsigned char *on = malloc((size_t)vs->n);
  if (on) for (int v = 0; v < vs->n; v++) on[v] = !(vs->excluded && vs->excluded[v]);
  return on;
}

int advise_eval(const struct run_spec *base, const struct variation_set *vs, int threads, uint64_t headroom_of,
                struct advise_candidate *c, char *err) {
  struct pool p = {.base = base, .vs = vs, .spec = c->spec, .task = T_REPLAY, .threads = threads};
  unsigned char *on = judged(vs);
  if (!on) { snprintf(err, FB_ERRLEN, "out of host memory"); return 1; }
  p.only = on;
  int n = vs->n;
  if (pool_alloc(&p, n)) { pool_free(&p); free(on); snprintf(err, FB_ERRLEN, "out of host memory"); return 1; }
  run_all(&p);
  int cls = worst_class(&p, c->spec, err);
  if (cls) { c->r = p.rs[0]; pool_free(&p); free(on); return cls; }
  c->r = p.rs[0];
  c->nvariations = 0;
  c->fits_variations = 0;
  c->worst_reserved = 0;
  c->min_events = UINT64_MAX;
  c->worst_variation = -1;
  c->need = 0;
  c->failed_mask = 0;
  c->worst_x = 0;
  double driver = 0;
  int first_fail = -1;
  for (int v = 0; v < n; v++) {
    if (!on[v]) continue;
    const struct run_result *r = &p.rs[v];
    int ok = r->completed && !r->oom_count;
    c->nvariations++;
    c->fits_variations += ok;
    if (!ok) c->failed_mask |= 1ull << v;
    if (ok && r->peak_reserved > c->worst_reserved) { c->worst_reserved = r->peak_reserved; if (first_fail < 0) c->worst_variation = v; }
    if (ok && r->peak_requested && (double)r->peak_reserved / (double)r->peak_requested > c->worst_x)
      c->worst_x = (double)r->peak_reserved / (double)r->peak_requested;
    if (!ok && first_fail < 0) { first_fail = v; c->worst_variation = v; }
    if (r->events < c->min_events) c->min_events = r->events;
    driver += (double)r->modeled_driver_ns;
  }
  c->mean_driver_ns = c->nvariations ? (uint64_t)(driver / c->nvariations + 0.5) : 0;
  c->fits = c->fits_variations == c->nvariations;
  c->headroom = c->fits ? (int64_t)headroom_of - (int64_t)c->worst_reserved : INT64_MIN;
  pool_free(&p);
  free(on);
  return 0;
}

int advise_needs(const struct run_spec *base, const struct variation_set *vs, int threads, uint64_t headroom_of,
                 int all_variations, struct advise_candidate *c, char *err) {
  int n = vs->n;
  struct pool p = {.base = base, .vs = vs, .spec = c->spec, .threads = threads, .task = T_MINCAP};
  unsigned char *which = calloc((size_t)n, 1);
  if (!which || pool_alloc(&p, n)) { free(which); pool_free(&p); snprintf(err, FB_ERRLEN, "out of host memory"); return 1; }
  int any = 0;
  for (int v = 0; v < n; v++)
    any += which[v] = (unsigned char)(!(vs->excluded && vs->excluded[v]) && (all_variations || ((c->failed_mask >> v) & 1)));
  p.only = which;
  int cls = 0;
  if (any) {
    run_all(&p);
    cls = worst_class(&p, c->spec, err);
  }
  uint64_t need = 0, need_min = UINT64_MAX;
  double x_min = 0, x_max = 0;
  int unknown = 0;
  for (int v = 0; !cls && v < n; v++) {
    if (!which[v]) continue;
    if (!p.rs[v].mincap_bytes) unknown = 1;          /* does not complete even on the whole device */
    else {
      if (p.rs[v].mincap_bytes < need_min) need_min = p.rs[v].mincap_bytes;
      double x = p.rs[v].peak_requested ? (double)p.rs[v].mincap_bytes / (double)p.rs[v].peak_requested : 0;
      if (x > 0 && (x_min == 0 || x < x_min)) x_min = x;
      if (x > x_max) x_max = x;
      if (p.rs[v].mincap_bytes > need) { need = p.rs[v].mincap_bytes; if (!c->fits) c->worst_variation = v; }
    }
  }
  if (!cls) {
    c->need = unknown ? 0 : need;
    c->need_min = unknown || !all_variations ? 0 : need_min;
    c->need_x_min = unknown || !all_variations ? 0 : x_min;
    c->need_x_max = unknown || !all_variations ? 0 : x_max;
    if (!c->fits) {                                 /* what it would take: the smallest limit it completes under */
      if (unknown) c->worst_x = 1e9;
      else if (x_max > c->worst_x) c->worst_x = x_max;
      uint64_t worst = unknown ? UINT64_MAX / 4 : need;
      if (worst > c->worst_reserved) c->worst_reserved = worst;
      c->headroom = (int64_t)headroom_of - (int64_t)c->worst_reserved;
      if (c->headroom >= 0) c->headroom = -1;      /* it failed under the limit all the same (non-monotonic) */
    }
  }
  free(which);
  pool_free(&p);
  return cls;
}
