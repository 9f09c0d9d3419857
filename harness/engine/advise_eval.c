/* advise_eval.c - allocator settings judged on every variation of the job (see advise.h):
 * a batch of settings x variations replayed as one list of tasks on the engine's pool
 * (row_pool.h: as many workers as there are cores; each takes the next task), every
 * result in its own slot, then folded in order into each candidate's worst case; for a setting that
 * does not fit everywhere, or when asked, the smallest limit it completes under (mincap,
 * per variation), batched the same way. Where only a setting's largest need is read (those
 * that did not fit), its variations are searched largest peak first and a search stops once
 * it can be neither that need nor the variation named for it (struct mincap_stop). Output
 * does not depend on the number of threads. */
#include "advise.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mincap.h"
#include "row_pool.h"

enum task { T_REPLAY, T_MINCAP };

/* n settings x every variation, as one list of tasks for the pool: task t is setting
 * t / vs->n on variation t % vs->n; each worker takes the next task, each result lands in
 * its own slot, so the figures and their order do not depend on the number of threads */
struct pool {
  const struct run_spec *base;
  const struct variation_set *vs;
  const char *const *spec;       /* one per setting */
  int nspec;
  enum task task;
  const unsigned char *only;     /* [setting * vs->n + v]: replay it (NULL: all) */
  struct run_result *rs;         /* [setting * vs->n + v] */
  int *cls;                      /* [setting * vs->n + v] */
  int threads;
  /* needs read as their largest (T_MINCAP, not on every variation): each setting's
   * largest found so far as need_key(), and the variations searched largest peak first */
  _Atomic uint64_t *largest;     /* [setting], or NULL: every search to its end */
  const int *by_peak;            /* [vs->n]: the variations, largest peak requested first */
  unsigned char *stopped;        /* [setting * vs->n + v]: its search stopped, it is not the largest */
};

/* A need and its variation as one number that orders them as fold_needs does: the larger
 * need first, and of equal needs the lower variation (the one fold_needs keeps). */
static uint64_t need_key(uint64_t need, int v) { return need << 6 | (uint64_t)(VARIATIONS_MAX - 1 - v); }

/* a need search of setting i on variation v, stopped once it can be neither the setting's
 * largest need nor the variation fold_needs names for it */
struct need_stop { struct pool *p; int i, v; };

static int need_is_not_largest(uint64_t hi, void *ctx) {
  const struct need_stop *n = ctx;
  return need_key(hi, n->v) < atomic_load(&n->p->largest[n->i]);
}

/* a search of setting i on variation v ended with its need r->mincap_bytes */
static void need_found(struct pool *p, int i, int v, const struct run_result *r) {
  if (r->exit_class || !r->mincap_bytes) return;
  uint64_t k = need_key(r->mincap_bytes, v), was = atomic_load(&p->largest[i]);
  while (k > was && !atomic_compare_exchange_weak(&p->largest[i], &was, k)) {}
}

static void one(struct pool *p, int i, int v) {
  int t = i * p->vs->n + v;
  struct run_spec rs = *p->base;
  rs.events = &p->vs->v[v];
  rs.allocator = p->spec[i];
  run_result_init(&p->rs[t]);
  if (p->task == T_MINCAP) {   /* the cap is all advise reads */
    struct need_stop ns = {p, i, v};
    struct mincap_stop stop = {need_is_not_largest, &ns};
    struct mincap_report rep;
    p->cls[t] = mincap_need(&rs, ADVISE_NEED_PRECISION, p->largest ? &stop : NULL, &p->rs[t], &rep);
    if (rep.stopped) p->stopped[t] = 1;
    else if (p->largest) need_found(p, i, v, &p->rs[t]);
  } else {
    p->cls[t] = replay_run(&rs, &p->rs[t]);
  }
}

/* task t: setting t / vs->n on variation t % vs->n; where needs are read as their largest,
 * every setting's largest-peak variation first, then every setting's next (so a search
 * starts knowing the largest need of its setting so far) */
static void task(int t, void *arg) {
  struct pool *p = arg;
  int n = p->vs->n, i = t / n, v = t % n;
  if (p->largest) { i = t % p->nspec; v = p->by_peak[t / p->nspec]; }
  if (!p->only || p->only[i * n + v]) one(p, i, v);
}

/* every task (of `only`) run on the engine's pool (row_pool.h), p->threads at a time */
static int run_all(struct pool *p) {
  int n = p->nspec * p->vs->n;
  return row_pool_run(n, p->threads < 1 ? 1 : p->threads, task, NULL, NULL, p) < 0 ? -1 : 0;
}

static int pool_alloc(struct pool *p, int n) {
  p->rs = calloc((size_t)n, sizeof *p->rs);
  p->cls = calloc((size_t)n, sizeof *p->cls);
  return p->rs && p->cls ? 0 : -1;
}

static void pool_free(struct pool *p) {
  free(p->rs);
  free(p->cls);
  free(p->largest);
  free((void *)p->by_peak);
  free(p->stopped);
}

/* the variations by their peak requested, largest first (of equal ones the lower first) */
static int *variations_by_peak(const struct variation_set *vs) {
  int *o = malloc((size_t)(vs->n > 0 ? vs->n : 1) * sizeof *o);
  for (int k = 0; o && k < vs->n; k++) {
    int j = k;
    for (; j > 0 && vs->peak[o[j - 1]] < vs->peak[k]; j--) o[j] = o[j - 1];
    o[j] = k;
  }
  return o;
}

/* setting i's worst exit class over its variations, and the first variation with it in err */
static int worst_class(const struct pool *p, int i, char *err) {
  int worst = 0, n = p->vs->n;
  for (int v = 0; v < n; v++) {
    int t = i * n + v;
    if ((!p->only || p->only[t]) && p->cls[t] > worst) {
      worst = p->cls[t];
      snprintf(err, FB_ERRLEN, "%.200s (variation %d): %.280s", p->spec[i], v, p->rs[t].status);
    }
  }
  return worst;
}

/* one setting's aggregates from its runs on the judged variations */
static void fold_eval(struct advise_candidate *c, const struct run_result *rs, const unsigned char *on, int n, uint64_t headroom_of) {
  c->r = rs[0];
  c->nvariations = 0;
  c->fits_variations = 0;
  c->worst_reserved = 0;
  c->min_events = UINT64_MAX;
  c->worst_variation = -1;
  c->need = 0;
  c->failed_mask = 0;
  double driver = 0;
  int first_fail = -1;
  for (int v = 0; v < n; v++) {
    if (!on[v]) continue;
    const struct run_result *r = &rs[v];
    int ok = r->completed && !r->oom_count;
    c->nvariations++;
    c->fits_variations += ok;
    if (!ok) c->failed_mask |= 1ull << v;
    if (ok && r->peak_reserved > c->worst_reserved) { c->worst_reserved = r->peak_reserved; if (first_fail < 0) c->worst_variation = v; }
    if (!ok && first_fail < 0) { first_fail = v; c->worst_variation = v; }
    if (r->events < c->min_events) c->min_events = r->events;
    driver += (double)r->modeled_driver_ns;
  }
  c->mean_driver_ns = c->nvariations ? (uint64_t)(driver / c->nvariations + 0.5) : 0;
  c->fits = c->fits_variations == c->nvariations;
  c->headroom = c->fits ? (int64_t)headroom_of - (int64_t)c->worst_reserved : INT64_MIN;
}

static const char **specs_of(struct advise_candidate *const *c, int nc) {
  const char **spec = malloc((size_t)(nc ? nc : 1) * sizeof *spec);
  for (int i = 0; spec && i < nc; i++) spec[i] = c[i]->spec;
  return spec;
}

int advise_eval_many(const struct run_spec *base, const struct variation_set *vs, int threads, uint64_t headroom_of,
                     struct advise_candidate *const *c, int nc, int *done, char *err) {
  int n = vs->n;
  *done = 0;
  struct pool p = {.base = base, .vs = vs, .nspec = nc, .task = T_REPLAY, .threads = threads};
  const char **spec = specs_of(c, nc);
  unsigned char *on = malloc((size_t)(nc > 0 && n > 0 ? nc * n : 1));
  if (!spec || !on || pool_alloc(&p, nc * n)) {
    free(spec); free(on); pool_free(&p);
    snprintf(err, FB_ERRLEN, "out of host memory");
    return 1;
  }
  p.spec = spec;
  for (int i = 0; i < nc; i++)   /* the variations a setting is judged on: all but those no setting can fit */
    for (int v = 0; v < n; v++) on[i * n + v] = !(vs->excluded && vs->excluded[v]);
  p.only = on;
  run_all(&p);
  int cls = 0;
  for (int i = 0; i < nc && !cls; i++) {   /* in order: the first setting that failed stops the search there */
    if ((cls = worst_class(&p, i, err))) { c[i]->r = p.rs[i * n]; break; }
    fold_eval(c[i], &p.rs[i * n], &on[i * n], n, headroom_of);
    (*done)++;
  }
  free(spec);
  free(on);
  pool_free(&p);
  return cls;
}

int advise_eval(const struct run_spec *base, const struct variation_set *vs, int threads, uint64_t headroom_of,
                struct advise_candidate *c, char *err) {
  int done;
  return advise_eval_many(base, vs, threads, headroom_of, &c, 1, &done, err);
}

/* one setting's need from its mincap runs on the variations in which */
static void fold_needs(struct advise_candidate *c, const struct run_result *rs, const unsigned char *which, int n, int all_variations,
                       uint64_t headroom_of) {
  uint64_t need = 0, need_min = UINT64_MAX;
  double x_min = 0, x_max = 0;
  int unknown = 0;
  for (int v = 0; v < n; v++) {
    if (!which[v]) continue;
    if (!rs[v].mincap_bytes) unknown = 1;          /* does not complete even on the whole device */
    else {
      if (rs[v].mincap_bytes < need_min) need_min = rs[v].mincap_bytes;
      double x = rs[v].peak_requested ? (double)rs[v].mincap_bytes / (double)rs[v].peak_requested : 0;
      if (x > 0 && (x_min == 0 || x < x_min)) x_min = x;
      if (x > x_max) x_max = x;
      if (rs[v].mincap_bytes > need) { need = rs[v].mincap_bytes; if (!c->fits) c->worst_variation = v; }
    }
  }
  c->need = unknown ? 0 : need;
  c->need_min = unknown || !all_variations ? 0 : need_min;
  c->need_x_min = unknown || !all_variations ? 0 : x_min;
  c->need_x_max = unknown || !all_variations ? 0 : x_max;
  if (!c->fits) {                                 /* what it would take: the smallest limit it completes under */
    uint64_t worst = unknown ? UINT64_MAX / 4 : need;
    if (worst > c->worst_reserved) c->worst_reserved = worst;
    c->headroom = (int64_t)headroom_of - (int64_t)c->worst_reserved;
    if (c->headroom >= 0) c->headroom = -1;      /* it failed under the limit all the same (non-monotonic) */
  }
}

int advise_needs_many(const struct run_spec *base, const struct variation_set *vs, int threads, uint64_t headroom_of,
                      int all_variations, struct advise_candidate *const *c, int nc, char *err) {
  int n = vs->n;
  struct pool p = {.base = base, .vs = vs, .nspec = nc, .threads = threads, .task = T_MINCAP};
  const char **spec = specs_of(c, nc);
  unsigned char *which = calloc((size_t)(nc > 0 && n > 0 ? nc * n : 1), 1);
  if (!all_variations) {   /* only each setting's largest need is read: a search that cannot be it stops */
    p.largest = calloc((size_t)(nc > 0 ? nc : 1), sizeof *p.largest);
    p.by_peak = variations_by_peak(vs);
    p.stopped = calloc((size_t)(nc > 0 && n > 0 ? nc * n : 1), 1);
  }
  if (!spec || !which || pool_alloc(&p, nc * n) || (p.largest && (!p.by_peak || !p.stopped))) {
    free(spec); free(which); pool_free(&p);
    snprintf(err, FB_ERRLEN, "out of host memory");
    return 1;
  }
  p.spec = spec;
  for (int i = 0; i < nc; i++)
    for (int v = 0; v < n; v++)
      which[i * n + v] = (unsigned char)(!(vs->excluded && vs->excluded[v]) && (all_variations || ((c[i]->failed_mask >> v) & 1)));
  p.only = which;
  run_all(&p);
  for (int t = 0; p.stopped && t < nc * n; t++)   /* a search stopped is neither the largest need nor its variation */
    if (p.stopped[t]) which[t] = 0;
  int cls = 0;
  for (int i = 0; i < nc && !cls; i++)   /* in order: the first setting that failed stops there */
    if (!(cls = worst_class(&p, i, err))) fold_needs(c[i], &p.rs[i * n], &which[i * n], n, all_variations, headroom_of);
  free(spec);
  free(which);
  pool_free(&p);
  return cls;
}

int advise_needs(const struct run_spec *base, const struct variation_set *vs, int threads, uint64_t headroom_of,
                 int all_variations, struct advise_candidate *c, char *err) {
  return advise_needs_many(base, vs, threads, headroom_of, all_variations, &c, 1, err);
}
