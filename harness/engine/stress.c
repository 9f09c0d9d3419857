/* stress.c - stress mode: many host threads, one allocator instance; see stress.h.
 * Owns the per-instance lock (taken only here), the random and trace-derived patterns,
 * the per-thread counts, and the end-of-run checks (nothing overlapping, nothing lost). */
#include "stress.h"
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "replay_open.h"
#include "inputs.h"
#include "livemap.h"
#include "timing.h"
#include "validator.h"
#include "workload.h"

#define HUGE_REQUEST (1ull << 48)   /* larger than any device: skipped, as replay does */
#define CHECK_EVERY 4096            /* full counts/check() cadence under --validate, over all threads */
#define CLOCK_EVERY 16              /* calls between two looks at the clock */
#define EMPTY_CACHE_ONE_IN 1024     /* random pattern: one empty_cache per this many calls, on average */

/* What every thread shares: the strategy, the device and the validator, under one lock. */
struct shared {
  pthread_mutex_t lock;
  const struct allocator_ops *ops;
  void *a;
  struct device dev;
  struct validator v;
  int validating;
  uint64_t calls_since_check, checks;
  atomic_int failed;              /* set once; every thread stops */
  int fail_class;
  char err[FB_ERRLEN];
  uint64_t deadline_ns;
  const struct stress_spec *s;
};

struct held_block { struct block b; };

struct worker {
  struct shared *sh;
  int index;
  uint64_t stream, rng;
  struct stress_thread *out;
  /* random pattern */
  struct held_block *live;
  unsigned nlive, max_live;
  double log_min, log_span;
  /* trace-derived pattern */
  struct workload w;
  int has_workload;
  struct livemap map;
};

static uint64_t next_rand(uint64_t *s) {   /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* under the lock */
static void fail_locked(struct shared *sh, int cls, const char *msg) {
  if (atomic_load(&sh->failed)) return;
  snprintf(sh->err, sizeof sh->err, "%s", msg);
  sh->fail_class = cls;
  atomic_store(&sh->failed, 1);
}

static void fail(struct shared *sh, int cls, const char *msg) {
  pthread_mutex_lock(&sh->lock);
  fail_locked(sh, cls, msg);
  pthread_mutex_unlock(&sh->lock);
}

static uint64_t flushes_locked(struct shared *sh) {
  if (!sh->ops->stats) return 0;
  struct alloc_stats st = {0};
  sh->ops->stats(sh->a, &st);
  return st.cache_flushes;
}

static void periodic_check_locked(struct shared *sh) {
  if (!sh->validating || ++sh->calls_since_check < CHECK_EVERY) return;
  sh->calls_since_check = 0;
  sh->checks++;
  char err[FB_ERRLEN];
  if (validator_counts(&sh->v, err)) fail_locked(sh, 1, err);
}

/* 0 block handed out, FB_OOM, or -1 (failure recorded; stop) */
static int locked_alloc(struct worker *w, uint64_t size, uint32_t pool, struct block *b) {
  struct shared *sh = w->sh;
  char err[FB_ERRLEN];
  pthread_mutex_lock(&sh->lock);
  uint64_t inj = sh->dev.c.injected_failures, fl = flushes_locked(sh);
  memset(b, 0, sizeof *b);
  int rc = alloc_in_pool(sh->ops, sh->a, size, w->stream, pool, b);
  w->out->injected += sh->dev.c.injected_failures - inj;
  w->out->flushes += flushes_locked(sh) - fl;
  w->out->allocs++;
  w->out->ops++;
  if (rc == FB_OOM) {
    w->out->ooms++;
  } else if (rc < 0) {
    snprintf(err, sizeof err, "thread %d (stream %llu): alloc of %llu bytes: device error: %.400s", w->index,
             (unsigned long long)w->stream, (unsigned long long)size, sh->dev.err[0] ? sh->dev.err : "(no message)");
    fail_locked(sh, 1, err);
    rc = -1;
  } else if (rc > 0) {
    snprintf(err, sizeof err, "thread %d: alloc returned %d, expected 0, FB_OOM or a negative error", w->index, rc);
    fail_locked(sh, 1, err);
    rc = -1;
  } else if (sh->validating && validator_alloc(&sh->v, b, size, err)) {
    char msg[FB_ERRLEN];
    snprintf(msg, sizeof msg, "thread %d (stream %llu): %.400s", w->index, (unsigned long long)w->stream, err);
    fail_locked(sh, 1, msg);
    rc = -1;
  }
  if (rc >= 0) periodic_check_locked(sh);
  pthread_mutex_unlock(&sh->lock);
  return rc;
}

static int locked_free(struct worker *w, struct block *b) {
  struct shared *sh = w->sh;
  char err[FB_ERRLEN];
  int rc = 0;
  pthread_mutex_lock(&sh->lock);
  if (sh->validating && validator_free(&sh->v, b, err)) {
    char msg[FB_ERRLEN];
    snprintf(msg, sizeof msg, "thread %d (stream %llu): %.400s", w->index, (unsigned long long)w->stream, err);
    fail_locked(sh, 1, msg);
    rc = -1;
  }
  sh->ops->free(sh->a, b);
  w->out->frees++;
  w->out->ops++;
  periodic_check_locked(sh);
  pthread_mutex_unlock(&sh->lock);
  return rc;
}

/* empty_cache, or a pool's event (emptyCache(pool), releasePool): ev NULL = empty_cache */
static void locked_empty_cache(struct worker *w, const struct event *ev) {
  struct shared *sh = w->sh;
  pthread_mutex_lock(&sh->lock);
  if (ev) pool_event(sh->ops, sh->a, ev);
  else sh->ops->empty_cache(sh->a);
  if (!ev || ev->op == OP_EMPTY_CACHE) w->out->empty_caches++;
  w->out->ops++;
  periodic_check_locked(sh);
  pthread_mutex_unlock(&sh->lock);
}

/* time up, op budget spent, or another thread failed */
static int should_stop(struct worker *w) {
  struct shared *sh = w->sh;
  if (atomic_load_explicit(&sh->failed, memory_order_relaxed)) return 1;
  if (sh->s->ops_per_thread) return w->out->ops >= sh->s->ops_per_thread;
  return (w->out->ops % CLOCK_EVERY) == 0 && now_ns() >= sh->deadline_ns;
}

static uint64_t random_size(struct worker *w) {
  double u = (double)(next_rand(&w->rng) >> 11) * (1.0 / 9007199254740992.0);
  double v = exp(w->log_min + u * w->log_span);
  return v < 1 ? 1 : (uint64_t)v;
}

static void run_random(struct worker *w) {
  while (!should_stop(w)) {
    uint64_t x = next_rand(&w->rng);
    if (((x >> 8) % EMPTY_CACHE_ONE_IN) == 0) { locked_empty_cache(w, NULL); continue; }
    if (w->nlive == 0 || (w->nlive < w->max_live && (x & 1))) {
      struct block b;
      int rc = locked_alloc(w, random_size(w), 0, &b);
      if (rc < 0) return;
      if (rc == 0) w->live[w->nlive++].b = b;
    } else {
      unsigned i = (unsigned)((x >> 1) % w->nlive);
      struct block b = w->live[i].b;
      w->live[i] = w->live[--w->nlive];
      if (locked_free(w, &b)) return;
    }
  }
}

/* trace-derived: free what this pass left live (the workload's leaks), drop OOM'd ids */
static int trace_release_all(struct worker *w) {
  size_t n = 0;   /* in id order (the map's slot order is seeded per run); out of memory: slot order below */
  uint64_t *ids = livemap_sorted_ids(&w->map, LIVE_BLOCK, &n);
  for (size_t k = 0; k < n; k++) {
    struct live_entry *e = livemap_get(&w->map, ids[k]);
    struct block b = e->b;
    livemap_del(&w->map, e);
    if (locked_free(w, &b)) { free(ids); return -1; }
  }
  free(ids);
  for (size_t i = 0; w->map.slots && i <= w->map.mask;) {
    struct live_entry *e = &w->map.slots[i];
    if (e->state == LIVE_BLOCK) {
      struct block b = e->b;
      livemap_del(&w->map, e);
      if (locked_free(w, &b)) return -1;
      continue;   /* backward shift may have moved another entry into slot i */
    }
    if (e->state == LIVE_DROPPED) { livemap_del(&w->map, e); continue; }
    i++;
  }
  return 0;
}

static int trace_event(struct worker *w, const struct event *ev) {
  struct live_entry *e;
  switch (ev->op) {
  case OP_ALLOC: {
    if (ev->size == 0 || ev->size >= HUGE_REQUEST) { w->out->skipped++; return 0; }
    e = livemap_get(&w->map, ev->id);
    if (e && e->state == LIVE_BLOCK) { w->out->skipped++; return 0; }
    if (e) livemap_del(&w->map, e);
    struct block b;
    int rc = locked_alloc(w, ev->size, ev->pool, &b);
    if (rc < 0) return -1;
    e = livemap_put(&w->map, ev->id);
    if (!e) { fail(w->sh, 1, "out of host memory"); return -1; }
    e->requested = ev->size;
    e->b = b;
    e->state = rc == 0 ? LIVE_BLOCK : LIVE_DROPPED;
    return 0;
  }
  case OP_FREE: {
    e = livemap_get(&w->map, ev->id);
    if (!e) { w->out->skipped++; return 0; }
    struct block b = e->b;
    int was_block = e->state == LIVE_BLOCK;
    livemap_del(&w->map, e);
    return was_block ? locked_free(w, &b) : 0;
  }
  case OP_EMPTY_CACHE: case OP_POOL_RELEASE:
    locked_empty_cache(w, ev);
    return 0;
  case OP_ITER:
    return 0;
  }
  return 0;
}

static void run_trace(struct worker *w) {
  char err[FB_ERRLEN];
  uint64_t events_this_pass = 0;
  while (!should_stop(w)) {
    struct event ev;
    int rc = workload_next(&w->w, &ev, err);
    if (rc < 0) { fail(w->sh, 2, err); return; }
    if (rc == 0) {
      if (trace_release_all(w)) return;
      w->out->passes++;
      if (!events_this_pass) return;   /* an empty workload: nothing to repeat */
      events_this_pass = 0;
      if (workload_rewind(&w->w, err)) { fail(w->sh, 2, err); return; }
      continue;
    }
    events_this_pass++;
    ev.stream = w->stream;
    if (trace_event(w, &ev)) return;
  }
}

static void *worker_main(void *arg) {
  struct worker *w = arg;
  uint64_t t0 = now_ns();
  if (w->has_workload) {
    run_trace(w);
    trace_release_all(w);
  } else {
    run_random(w);
    while (w->nlive) {
      struct block b = w->live[--w->nlive].b;
      locked_free(w, &b);
    }
  }
  w->out->seconds = (double)(now_ns() - t0) / 1e9;
  return NULL;
}

/* a generator by name, or a trace by content (as replay.c opens them) */
static int open_source(const struct stress_spec *s, struct workload *w, uint64_t seed, uint64_t percent_base, char *err) {
  struct workload_ctx ctx = {.rank = 0, .world = 1, .seed = seed, .path = s->trace, .trace_device = s->trace_device};
  if (s->trace) {   /* held in memory for the command (inputs.h): every thread replays the one read */
    ctx.events = inputs_get(s->trace, s->trace_device);
    const struct workload_ops *ops = ctx.events ? &trace_mem_workload : trace_detect(s->trace, err);
    if (!ops || workload_open(w, ops, NULL, &ctx, percent_base, err)) return -1;
    return 0;
  }
  char name[64];
  struct params tmp;
  if (params_parse_spec(s->workload, name, sizeof name, &tmp, err)) return -1;
  const struct workload_ops *ops = workload_find(name);
  if (!ops) {
    replay_unknown_workload(name, err);
    return -1;
  }
  return workload_open(w, ops, s->workload, &ctx, percent_base, err);
}

static const struct allocator_ops *resolve(const struct stress_spec *s, struct params *p, uint64_t percent_base, char *err) {
  char name[64];
  memset(p, 0, sizeof *p);
  if (s->allocator && params_parse_spec(s->allocator, name, sizeof name, p, err)) return NULL;
  const struct allocator_ops *ops = s->ops;
  if (!ops) {
    if (!s->allocator) { snprintf(err, FB_ERRLEN, "stress needs --allocator NAME"); return NULL; }
    if (!strcmp(name, "recorded")) {
      snprintf(err, FB_ERRLEN, "--allocator recorded is for run and mincap; stress needs a strategy by name");
      return NULL;
    }
    ops = allocator_find(name);
    if (!ops) {
      replay_unknown_allocator(name, 0, err);
      return NULL;
    }
  }
  p->percent_base = percent_base;
  if (params_check(p, ops->params, ops->name, err)) return NULL;
  return ops;
}

static int set_error(struct stress_result *r, int cls, const char *msg) {
  snprintf(r->status, sizeof r->status, "error: %s", msg);
  r->exit_class = cls;
  return cls;
}

/* After every thread has freed what it held: counts agree, nothing live, destroy, nothing held. */
static void final_checks(struct shared *sh, struct stress_result *r) {
  char err[FB_ERRLEN];
  if (!atomic_load(&sh->failed) && sh->validating) {
    sh->checks++;
    if (validator_counts(&sh->v, err)) fail_locked(sh, 1, err);
    else if (sh->v.live.count) {
      snprintf(err, sizeof err, "validator: %llu blocks still live after every thread freed its own",
               (unsigned long long)sh->v.live.count);
      fail_locked(sh, 1, err);
    }
  }
  sh->ops->destroy(sh->a);
  sh->a = NULL;
  if (!atomic_load(&sh->failed)) {
    if (sh->validating) {
      if (validator_final(&sh->v, err)) fail_locked(sh, 1, err);
    } else if (sh->dev.reserved || dev_ranges_held(&sh->dev)) {
      snprintf(err, sizeof err, "lost block: after destroy() the device still holds %llu bytes in %llu handles/ranges",
               (unsigned long long)sh->dev.reserved, (unsigned long long)dev_ranges_held(&sh->dev));
      fail_locked(sh, 1, err);
    }
  }
  r->cache_flushes = 0;
  for (int i = 0; i < r->threads; i++) r->cache_flushes += r->t[i].flushes;
  r->injected_failures = sh->dev.c.injected_failures;
  r->peak_reserved = sh->dev.peak_reserved;
  r->checks = sh->checks;
}

int stress_run(const struct stress_spec *s, struct stress_result *r) {
  memset(r, 0, sizeof *r);
  snprintf(r->status, sizeof r->status, "ok");
  snprintf(r->validator, sizeof r->validator, "%s", s->validate ? "passed" : "off");
  char err[FB_ERRLEN];
  if (s->threads < 1 || s->threads > STRESS_MAX_THREADS) {
    snprintf(err, sizeof err, "threads %d: expected 1..%d", s->threads, STRESS_MAX_THREADS);
    return set_error(r, 2, err);
  }
  if (!s->ops_per_thread && !(s->seconds > 0)) return set_error(r, 2, "seconds: expected a positive number");
  if (!s->ops_per_thread && s->seconds > STRESS_SECONDS_MAX) {   /* seconds * 1e9 must fit the clock's 64 bits */
    snprintf(err, sizeof err, "seconds %g: at most %d (30 days)", s->seconds, STRESS_SECONDS_MAX);
    return set_error(r, 2, err);
  }
  r->threads = s->threads;
  uint64_t min_size = s->min_size ? s->min_size : STRESS_MIN_SIZE_DEFAULT;
  uint64_t max_size = s->max_size ? s->max_size : STRESS_MAX_SIZE_DEFAULT;
  unsigned max_live = s->max_live ? s->max_live : STRESS_MAX_LIVE_DEFAULT;
  if (min_size > max_size) return set_error(r, 2, "size range: min above max");
  if (s->workload || s->trace) snprintf(r->pattern, sizeof r->pattern, "trace-derived: %s", s->trace ? s->trace : s->workload);
  else {
    char a[32], b[32];
    snprintf(r->pattern, sizeof r->pattern, "random: %s..%s log-uniform, up to %u live blocks per thread",
             fmt_bytes(min_size, a, sizeof a), fmt_bytes(max_size, b, sizeof b), max_live);
  }

  struct shared *sh = calloc(1, sizeof *sh);
  struct worker *ws = calloc((size_t)s->threads, sizeof *ws);
  pthread_t *tids = calloc((size_t)s->threads, sizeof *tids);
  if (!sh || !ws || !tids) { free(sh); free(ws); free(tids); return set_error(r, 1, "out of host memory"); }
  sh->s = s;
  atomic_init(&sh->failed, 0);
  int dev_open = 0, created = 0, mutex = 0, nstarted = 0;

  if (device_open(&sh->dev, &s->device, err)) { set_error(r, 1, err); goto out; }
  dev_open = 1;
  snprintf(r->device_name, sizeof r->device_name, "%s", sh->dev.name);
  sh->dev.track_ranges = s->validate;
  device_set_cap(&sh->dev, s->cap_bytes);
  sh->dev.fail_rate = s->fail_rate;
  sh->dev.fail_rng = (sh->dev.fail_rng ^ (s->seed * 0x2545F4914F6CDD1Dull)) | 1;

  struct params ap;
  sh->ops = resolve(s, &ap, sh->dev.total, err);
  if (!sh->ops) { set_error(r, 2, err); goto out; }
  snprintf(r->allocator, sizeof r->allocator, "%s", sh->ops->name);
  params_format(&ap, r->params, sizeof r->params);
  if ((sh->ops->flags & ALLOC_NEEDS_POOL) && !dev_has_pool(&sh->dev)) {
    snprintf(r->status, sizeof r->status, "skipped: needs a GPU");
    goto out;
  }
  if (sh->ops->flags & ALLOC_OFFLINE) {
    snprintf(r->status, sizeof r->status, "skipped: an offline planner (plans one whole workload first), not an online strategy");
    goto out;
  }
  for (int i = 0; i < s->threads; i++) {
    struct worker *w = &ws[i];
    w->sh = sh;
    w->index = i;
    w->stream = (uint64_t)i + 1;
    w->out = &r->t[i];
    w->out->stream = w->stream;
    w->rng = s->seed * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xD1B54A32D192ED03ull + 1;
    if (s->workload || s->trace) {
      if (open_source(s, &w->w, s->seed + (uint64_t)i, sh->dev.total, err)) { set_error(r, 2, err); goto out; }
      w->has_workload = 1;
      if (livemap_init(&w->map, 1024)) { set_error(r, 1, "out of host memory"); goto out; }
    } else {
      w->max_live = max_live;
      w->live = calloc(max_live, sizeof *w->live);
      if (!w->live) { set_error(r, 1, "out of host memory"); goto out; }
      w->log_min = log((double)min_size);
      w->log_span = log((double)max_size) - w->log_min;
    }
  }
  if (sh->ops->create(&sh->a, &sh->dev, &ap, err)) { sh->a = NULL; set_error(r, 2, err); goto out; }
  created = 1;
  if (pthread_mutex_init(&sh->lock, NULL)) { set_error(r, 1, "pthread_mutex_init failed"); goto out; }
  mutex = 1;
  sh->dev.lock = &sh->lock;
  sh->validating = s->validate;
  if (sh->validating) validator_init(&sh->v, sh->ops, sh->a, &sh->dev);

  sh->deadline_ns = now_ns() + (uint64_t)(s->seconds * 1e9);
  for (; nstarted < s->threads; nstarted++)
    if (pthread_create(&tids[nstarted], NULL, worker_main, &ws[nstarted])) {
      fail(sh, 1, "pthread_create failed");
      break;
    }
  for (int i = 0; i < nstarted; i++) pthread_join(tids[i], NULL);

  pthread_mutex_lock(&sh->lock);
  final_checks(sh, r);
  created = 0;
  pthread_mutex_unlock(&sh->lock);
  if (atomic_load(&sh->failed)) {
    set_error(r, sh->fail_class ? sh->fail_class : 1, sh->err);
    if (sh->validating && sh->fail_class == 1) snprintf(r->validator, sizeof r->validator, "failed: %s", sh->err);
  }

out:
  if (created && sh->a) sh->ops->destroy(sh->a);
  if (sh->validating) validator_release(&sh->v);
  for (int i = 0; i < s->threads; i++) {
    free(ws[i].live);
    if (ws[i].has_workload) { workload_close(&ws[i].w); livemap_free(&ws[i].map); }
  }
  if (mutex) pthread_mutex_destroy(&sh->lock);
  if (dev_open) device_close(&sh->dev);
  int cls = r->exit_class;
  free(tids);
  free(ws);
  free(sh);
  return cls;
}
