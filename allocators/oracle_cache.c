/* oracle_cache.c - the oracle's plans made in this process, kept by what a plan is a
 * function of: the workload (its reader or generator, spec, parameters with what their
 * percentages are taken of, seed, rank and world, trace device, the events held in memory)
 * and the gap rule. Every row, cap probe and variation of one input then plans once, and a
 * plan made ahead (oracle's prepare, which the engine runs on another thread while a GPU
 * replays earlier rows) is found by the row. A plan handed out is a copy (the row frees
 * its own). At most ORACLE_CACHE_BYTES are kept, the oldest dropped first. Thread-safe. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "oracle.h"
#include "workload.h"

#define ORACLE_CACHE_BYTES (512ull << 20)
#define KEY_MAX 4096

struct cached {
  struct cached *next;     /* newer first */
  char *key;
  struct oracle_plan plan; /* placed */
  uint64_t bytes;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct cached *head;
static uint64_t held;
static uint64_t n_made, n_taken;   /* plans made, plans taken from the kept ones */

/* what the plan is made from, as text; 0, or -1 where the workload cannot say (a workload
 * not opened through workload_open has no spec: never kept) */
static int plan_key(const struct workload *w, int best_gap, char *key, size_t len) {
  if (!w->ops || !w->spec[0]) return -1;
  char params[2048];
  params_format(&w->params, params, sizeof params);
  int n = snprintf(key, len, "%p|%s|%s|%s|%llu|%llu|%d|%d|%d|%p|%d", (const void *)w->ops, w->spec,
                   w->ctx.path ? w->ctx.path : "", params, (unsigned long long)w->params.percent_base,
                   (unsigned long long)w->ctx.seed, w->ctx.rank, w->ctx.world, w->ctx.trace_device,
                   (const void *)w->ctx.events, best_gap);
  return n > 0 && (size_t)n < len ? 0 : -1;
}

static uint64_t plan_bytes(const struct oracle_plan *p) { return (4 * p->n + 2 * p->leaves) * sizeof(uint64_t); }

static uint64_t *dup_array(const uint64_t *a, uint64_t n) {
  uint64_t *c = malloc((n ? n : 1) * sizeof *c);
  if (c && n) memcpy(c, a, n * sizeof *c);
  return c;
}

/* a copy of src into dst (empty on entry); 0, or -1 out of host memory (dst left empty) */
static int plan_copy(struct oracle_plan *dst, const struct oracle_plan *src) {
  *dst = *src;
  dst->start = dup_array(src->start, src->n);
  dst->end = dup_array(src->end, src->n);
  dst->size = dup_array(src->size, src->n);
  dst->offset = dup_array(src->offset, src->n);
  dst->tree = src->tree ? dup_array(src->tree, 2 * src->leaves) : NULL;
  if (dst->start && dst->end && dst->size && dst->offset && (dst->tree || !src->tree)) return 0;
  int gap = dst->best_gap;
  oracle_plan_free(dst);
  dst->best_gap = gap;
  return -1;
}

/* the plan kept under key, or NULL (mu held) */
static struct cached *find(const char *key) {
  struct cached *c = head;
  while (c && strcmp(c->key, key)) c = c->next;
  return c;
}

/* the kept plan for key copied into p: 1, or 0 where none is kept */
static int lookup(const char *key, struct oracle_plan *p) {
  pthread_mutex_lock(&mu);
  struct cached *c = find(key);
  int found = c && !plan_copy(p, &c->plan);
  pthread_mutex_unlock(&mu);
  return found;
}

static void free_cached(struct cached *c) {
  oracle_plan_free(&c->plan);
  free(c->key);
  free(c);
}

/* whether a plan is kept under key */
static int kept(const char *key) {
  pthread_mutex_lock(&mu);
  int k = find(key) != NULL;
  pthread_mutex_unlock(&mu);
  return k;
}

/* keep a copy of p under key (nothing where one is kept already, or it does not fit) */
static void keep(const char *key, const struct oracle_plan *p) {
  uint64_t bytes = plan_bytes(p);
  if (bytes > ORACLE_CACHE_BYTES) return;
  struct cached *c = calloc(1, sizeof *c);
  if (!c || !(c->key = strdup(key)) || plan_copy(&c->plan, p)) {
    if (c) free(c->key);
    free(c);
    return;
  }
  c->bytes = bytes;
  struct cached *drop = NULL;
  pthread_mutex_lock(&mu);
  if (!find(key)) {
    c->next = head;
    head = c;
    held += bytes;
    while (held > ORACLE_CACHE_BYTES) {   /* the oldest first: the end of the list */
      struct cached **pp = &head;
      while ((*pp)->next) pp = &(*pp)->next;
      struct cached *old = *pp;
      *pp = NULL;
      held -= old->bytes;
      old->next = drop;
      drop = old;
    }
    c = NULL;
  }
  pthread_mutex_unlock(&mu);
  if (c) free_cached(c);   /* another thread kept the same plan first */
  for (struct cached *n; drop; drop = n) {
    n = drop->next;
    free_cached(drop);
  }
}

int oracle_plan_cached(struct oracle_plan *p, struct workload *w, int *made, char *err) {
  char key[KEY_MAX];
  int keyed = !plan_key(w, p->best_gap, key, sizeof key);
  *made = 0;
  if (keyed && lookup(key, p)) {
    __atomic_add_fetch(&n_taken, 1, __ATOMIC_RELAXED);
    return 0;
  }
  if (oracle_plan_record(p, w, err) || oracle_plan_place(p, err)) return -1;
  __atomic_add_fetch(&n_made, 1, __ATOMIC_RELAXED);
  *made = 1;
  if (keyed) keep(key, p);
  return 0;
}

int oracle_plan_ahead(struct workload *w, int best_gap, char *err) {
  char key[KEY_MAX];
  if (plan_key(w, best_gap, key, sizeof key) || kept(key)) return 0;
  struct oracle_plan p;
  memset(&p, 0, sizeof p);
  p.best_gap = best_gap;
  int rc = oracle_plan_record(&p, w, err) || oracle_plan_place(&p, err) ? -1 : 0;
  if (!rc) {
    __atomic_add_fetch(&n_made, 1, __ATOMIC_RELAXED);
    keep(key, &p);
  }
  oracle_plan_free(&p);
  return rc;
}

void oracle_cache_counts(uint64_t *made, uint64_t *taken) {
  *made = __atomic_load_n(&n_made, __ATOMIC_RELAXED);
  *taken = __atomic_load_n(&n_taken, __ATOMIC_RELAXED);
}

void oracle_cache_clear(void) {
  pthread_mutex_lock(&mu);
  struct cached *c = head;
  head = NULL;
  held = 0;
  pthread_mutex_unlock(&mu);
  for (struct cached *n; c; c = n) {
    n = c->next;
    free_cached(c);
  }
}
