/* replay.c - the replay engine: opens the device, the workload and the strategy for one
 * row, pulls events in batches, calls the strategy, and measures (memory figures in
 * metrics.c, host time per call in timing.c, --validate in validator.c). See replay.h. */
#include "replay.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "alloc_conf.h"
#include "livemap.h"
#include "metrics.h"
#include "replay_open.h"
#include "timeline.h"
#include "timing.h"
#include "validator.h"
#include "stream_acct.h"
#include "unmodelled.h"
#include "status.h"

#define BATCH 256
#define CHECK_EVERY 4096             /* --validate: full counts/check() cadence */

void run_result_init(struct run_result *r) {
  memset(r, 0, sizeof *r);
  r->first_oom_event = -1;
  r->overhead = r->frag = r->ext_frag = r->leak_bytes_per_iter = NAN;
  r->imbalance = NAN;
  r->mincap_x = NAN;
  r->ns_per_op = NAN;
  snprintf(r->status, sizeof r->status, "ok");
}

static void set_status(struct run_result *r, int cls, const char *fmt, const char *msg) {
  snprintf(r->status, sizeof r->status, fmt, msg);
  r->exit_class = cls;
}

struct replay {
  const struct run_spec *s;
  struct run_result *r;
  struct device dev;
  struct workload w;
  const struct allocator_ops *ops;
  void *a;
  struct livemap live;
  struct metrics m;
  struct histogram hist;
  struct validator v;
  int validating;
  int extras;                   /* --timeline, --validate, --touch or --verify: per-event work beyond the replay */
  int plain;                    /* no extras and no --breakdown: an alloc of pool 0 may take alloc_plain */
  uint64_t ev_index, host_ns;
  int64_t sample_tick;          /* calls since the last one timed on its own; far below 0 when untimed */
  uint64_t live_least, peak_least;   /* run_spec.least_floor: the live blocks' least bytes (allocator_ops.least_block) */
  uint64_t allocs, frees;       /* the row's allocs and frees, copied to it by fill_result */
  uint64_t untimed_allocs;      /* allocs no strategy was asked for (HUGE_REQUEST): not timed calls */
  uint64_t sampled_ns, sampled_calls;   /* the calls timed on their own: their spans, reads included, out of the mean (timing.h) */
  uint64_t read_ns;             /* one clock read (now_cost_ns) */
  struct timeline tl;           /* --timeline's samples */
  int is_cuda;
  int touch;                    /* --touch, or a stream-ordered strategy on cuda without --no-touch */
  uint64_t touch_ns;            /* time in touch calls: the program's work, not the strategy's */
  int pool_blind;               /* a private-pool allocation went to a strategy without alloc_pool */
  char notes[FB_ERRLEN];        /* "; not modelled: ..." for the status, gathered during the run */
  char err[FB_ERRLEN];
};

static void note_unmodelled(struct replay *x, const char *what) {
  unmodelled_note(x->notes, sizeof x->notes, x->w.spec, what, x->s->quiet, x->s->warn);
}

static void warn_skip(struct replay *x, const char *what, uint64_t id) {
  x->r->skipped_events++;
  if (x->s->quiet && !x->s->strict) return;
  const char *where = x->w.ops->where ? x->w.ops->where(x->w.st) : NULL;
  FILE *f = x->s->warn ? x->s->warn : stderr;
  if (x->r->skipped_events <= 10 || x->s->strict)
    fprintf(f, "fragbench: warning: %s: event %llu: %s (id %#llx) skipped\n",
            where ? where : x->w.spec, (unsigned long long)x->ev_index, what, (unsigned long long)id);
  else if (x->r->skipped_events == 11)
    fprintf(f, "fragbench: warning: %s: further skipped events are counted, not shown\n", x->w.spec);
}

static void note_reserved(struct replay *x) {
  if (x->dev.reserved > x->m.peak_reserved) {
    uint64_t largest = 0, inside = 0;
    x->ops->query(x->a, &largest, &inside);
    metrics_reserved_peak(&x->m, x->dev.reserved, largest, inside);
  }
}

/* After an alloc, in this order: --timeline's peak tracking, --validate, --touch, --verify. */
static int alloc_extras(struct replay *x, const struct event *ev, const struct block *b) {
  if (x->s->timeline) timeline_track(&x->tl, x->m.live_requested, x->dev.reserved);
  if (x->validating) {
    if (validator_alloc(&x->v, b, ev->size, x->err)) { set_status(x->r, 1, "error: %s", x->err); return -1; }
  }
  if (x->touch && x->dev.ops->touch) {
    uint64_t t0 = now_ns();
    int rc = x->dev.ops->touch(&x->dev, b->addr, b->size, b->stream);
    x->touch_ns += now_ns() - t0;
    if (rc) { set_status(x->r, 1, "error: %s", x->dev.err); return -1; }
  }
  if (x->s->verify && x->dev.ops->verify_write && x->dev.ops->verify_write(&x->dev, b->addr, b->size, b->stream, ev->id)) {
    set_status(x->r, 1, "error: %s", x->dev.err);
    return -1;
  }
  return 0;
}

/* the fewest bytes a block for a request of size takes (allocator_ops.least_block) */
static uint64_t least_of(const struct replay *x, uint64_t size) {
  return x->ops->least_block ? x->ops->least_block(x->a, size) : size;
}

/* the strategy's alloc call, timed on its own (one call in TIMING_SAMPLE) */
static __attribute__((noinline)) int alloc_sampled(struct replay *x, const struct event *ev, struct block *b) {
  x->sample_tick = 0;
  uint64_t d0 = x->dev.c.modeled_ns, t0 = now_ns();
  int rc = alloc_in_pool(x->ops, x->a, ev->size, ev->stream, ev->pool, b);
  uint64_t t = now_ns() - t0, span = t + x->read_ns;
  if (x->is_cuda) t -= x->dev.c.modeled_ns - d0 < t ? x->dev.c.modeled_ns - d0 : t;
  if (x->is_cuda) span -= x->dev.c.modeled_ns - d0 < span ? x->dev.c.modeled_ns - d0 : span;   /* the batch leaves driver time out already */
  x->sampled_ns += span;
  x->sampled_calls++;
  hist_add(&x->hist, t);
  return rc;
}

/* the strategy refused (FB_OOM) or failed (<0): as do_alloc returns */
static __attribute__((noinline)) int alloc_failed(struct replay *x, const struct event *ev, struct live_entry *e, int rc) {
  if (rc == FB_OOM) {
    x->r->oom_count++;
    if (x->r->first_oom_event < 0) x->r->first_oom_event = (int64_t)x->ev_index;
    if (x->s->on_oom == ON_OOM_STOP) return 1;
    livemap_commit(&x->live, e, ev->id, LIVE_DROPPED);
    return 0;
  }
  set_status(x->r, 1, "error: %s", x->dev.err[0] ? x->dev.err : "device error");
  return -1;
}

/* returns 0 to go on, 1 to stop (OOM under --on-oom stop), <0 on failure (status set) */
static __attribute__((noinline)) int do_alloc(struct replay *x, const struct event *ev) {
  if (ev->size == 0) {
    if (x->s->strict) goto strict;
    warn_skip(x, "zero-size allocation", ev->id);
    return 0;
  }
  struct live_entry *e = livemap_entry(&x->live, ev->id, ev->slot);
  if (!e) goto nomem;
  if (e->state == LIVE_BLOCK) { if (x->s->strict) goto strict; warn_skip(x, "allocation of an id that is already live", ev->id); return 0; }
  if (e->state == LIVE_DROPPED) { livemap_del(&x->live, e); e = livemap_entry(&x->live, ev->id, ev->slot); }
  if (ev->size >= HUGE_REQUEST) {   /* 2^48 and more: no device holds it - an OOM under any strategy, not asked of one */
    x->allocs++;
    x->untimed_allocs++;
    x->r->oom_count++;
    if (x->r->first_oom_event < 0) x->r->first_oom_event = (int64_t)x->ev_index;
    if (x->s->on_oom == ON_OOM_STOP) return 1;
    livemap_commit(&x->live, e, ev->id, LIVE_DROPPED);
    return 0;
  }
  struct block *b = &e->b;   /* the strategy fills the map's slot directly */
  *b = (struct block){0};
  if (x->dev.by_stream) {   /* what the device takes now is this stream's (and pool's) */
    x->dev.by_stream->cur = ev->stream;
    x->dev.by_stream->cur_pool = x->ops->pool_of ? x->ops->pool_of(x->a, ev->size) : NULL;
    if (ev->pool && x->ops->alloc_pool && x->dev.by_stream->cur_pool)   /* a private pool's growth, apart */
      x->dev.by_stream->cur_pool = !strcmp(x->dev.by_stream->cur_pool, "small") ? "private small" : "private large";
  }
  if (__builtin_expect(ev->pool && !x->ops->alloc_pool && !x->pool_blind, 0)) {
    char what[300];
    unmodelled_pool_blind(what, sizeof what, x->ops->name);
    note_unmodelled(x, what);
    x->pool_blind = 1;
  }
  int rc = ++x->sample_tick >= TIMING_SAMPLE ? alloc_sampled(x, ev, b)
                                              : alloc_in_pool(x->ops, x->a, ev->size, ev->stream, ev->pool, b);
  x->allocs++;
  if (rc) return alloc_failed(x, ev, e, rc);
  livemap_commit_requested(&x->live, e, ev->id, LIVE_BLOCK, ev->size);
  metrics_alloc(&x->m, ev->size, b->size);
  note_reserved(x);
  if (x->s->least_floor && (x->live_least += least_of(x, ev->size)) > x->peak_least) x->peak_least = x->live_least;
  return x->extras ? alloc_extras(x, ev, b) : 0;
nomem:
  set_status(x->r, 1, "error: %s", "out of host memory");
  return -1;
strict:
  snprintf(x->err, sizeof x->err, "%s: event %llu: %s (id %#llx) (--strict)",
           x->w.ops->where ? x->w.ops->where(x->w.st) : x->w.spec, (unsigned long long)x->ev_index,
           ev->size == 0 ? "zero-size allocation" : "allocation of an id that is already live",
           (unsigned long long)ev->id);
  set_status(x->r, 2, "error: %s", x->err);
  return -1;
}

/* do_alloc's steps for the common case - x->plain, pool 0, a size in (0, HUGE_REQUEST), an
 * id not live - with fewer tests; anything else goes to do_alloc, which looks the id up
 * again (the same slot: nothing changed in between) */
static inline __attribute__((always_inline)) int alloc_plain(struct replay *x, const struct event *ev) {
  struct live_entry *e = livemap_entry(&x->live, ev->id, ev->slot);
  if (__builtin_expect(!e || e->state != LIVE_EMPTY, 0)) return do_alloc(x, ev);
  struct block *b = &e->b;   /* the strategy fills the map's slot directly */
  *b = (struct block){0};
  int rc = ++x->sample_tick >= TIMING_SAMPLE ? alloc_sampled(x, ev, b) : x->ops->alloc(x->a, ev->size, ev->stream, b);
  x->allocs++;
  if (__builtin_expect(rc != 0, 0)) return alloc_failed(x, ev, e, rc);
  livemap_commit_requested(&x->live, e, ev->id, LIVE_BLOCK, ev->size);
  metrics_alloc(&x->m, ev->size, b->size);
  note_reserved(x);
  return 0;
}

/* Before a free, in this order: --verify's check, --validate. */
static int free_extras(struct replay *x, const struct block *b, uint64_t id) {
  if (x->s->verify && x->dev.ops->verify_check && x->dev.ops->verify_check(&x->dev, b->addr, b->size, b->stream, id)) {
    set_status(x->r, 1, "error: %s", x->dev.err);
    return -1;
  }
  if (x->validating && validator_free(&x->v, b, x->err)) { set_status(x->r, 1, "error: %s", x->err); return -1; }
  return 0;
}

/* the strategy's free call, timed on its own (one call in TIMING_SAMPLE) */
static __attribute__((noinline)) void free_sampled(struct replay *x, struct block *b) {
  x->sample_tick = 0;
  uint64_t d0 = x->dev.c.modeled_ns, t0 = now_ns();
  x->ops->free(x->a, b);
  uint64_t t = now_ns() - t0, span = t + x->read_ns;
  if (x->is_cuda) t -= x->dev.c.modeled_ns - d0 < t ? x->dev.c.modeled_ns - d0 : t;
  if (x->is_cuda) span -= x->dev.c.modeled_ns - d0 < span ? x->dev.c.modeled_ns - d0 : span;
  x->sampled_ns += span;
  x->sampled_calls++;
  hist_add(&x->hist, t);
}

/* recorded: DEV_STREAM_RECORDED for a stream-ordered strategy's block that other streams
 * used too (EV_FREE_RECORDED), else 0 */
/* plain: x->plain holds (a constant where inlined: no extras to test) */
static inline __attribute__((always_inline)) int free_entry(struct replay *x, size_t slot, int timed, uint64_t recorded,
                                                            int plain) {
  struct live_entry *e = &x->live.slots[slot];
  struct block b = e->b;
  uint64_t id = e->id;
  metrics_free(&x->m, e->requested, b.size);
  if (!plain && x->s->least_floor) x->live_least -= least_of(x, e->requested);
  livemap_del_at(&x->live, slot);
  if (!plain && x->extras && free_extras(x, &b, id)) return -1;
  b.stream |= recorded;
  if (timed && ++x->sample_tick >= TIMING_SAMPLE) free_sampled(x, &b);
  else x->ops->free(x->a, &b);
  if (timed) x->frees++;
  return 0;
}

/* a free of an id not in the map: skipped, or an error under --strict */
static __attribute__((noinline)) int free_unknown(struct replay *x, const struct event *ev) {
  if (x->s->strict) {
    snprintf(x->err, sizeof x->err, "%s: event %llu: free of an unknown id %#llx (--strict)",
             x->w.ops->where ? x->w.ops->where(x->w.st) : x->w.spec, (unsigned long long)x->ev_index,
             (unsigned long long)ev->id);
    set_status(x->r, 2, "error: %s", x->err);
    return -1;
  }
  warn_skip(x, "free of an unknown id (never allocated, or freed twice)", ev->id);
  return 0;
}

static inline __attribute__((always_inline)) int do_free(struct replay *x, const struct event *ev, int plain) {
  size_t slot = livemap_find_at(&x->live, ev->id, ev->slot);
  if (__builtin_expect(slot == LIVEMAP_NONE, 0)) return free_unknown(x, ev);
  if (x->live.slots[slot].state == LIVE_DROPPED) { livemap_del_at(&x->live, slot); return 0; }
  return free_entry(x, slot, 1, ev->stream == EV_FREE_RECORDED && (x->ops->flags & ALLOC_STREAM_ORDERED) ? DEV_STREAM_RECORDED : 0,
                    plain);
}

/* After each event: --timeline's samples when the workload has no ITERs, --validate's
 * periodic full check. */
static int event_extras(struct replay *x) {
  if (x->s->timeline) timeline_event(&x->tl, x->ev_index, x->m.iters, x->m.live_requested, x->m.live_allocated, x->dev.reserved);
  if (x->validating && ++x->v.ops_since_check >= CHECK_EVERY) {
    x->v.ops_since_check = 0;
    if (validator_counts(&x->v, x->err)) { set_status(x->r, 1, "error: %s", x->err); return -1; }
  }
  return 0;
}

static int do_event(struct replay *x, const struct event *ev) {
  int rc = 0;
  if (ev->op == OP_ALLOC)   /* the two common ops first: no jump table */
    rc = x->plain && !ev->pool && ev->size - 1 < HUGE_REQUEST - 1 ? alloc_plain(x, ev) : do_alloc(x, ev);
  else if (ev->op == OP_FREE) rc = do_free(x, ev, 0);
  else switch (ev->op) {
  case OP_ALLOC: case OP_FREE: break;
  case OP_EMPTY_CACHE: case OP_POOL_RELEASE:
    pool_event(x->ops, x->a, ev);
    break;
  case OP_ITER:
    if (x->s->timeline) timeline_iter(&x->tl, x->ev_index, x->m.iters, x->m.live_requested, x->m.live_allocated, x->dev.reserved);
    metrics_iter(&x->m);
    break;
  }
  if (rc) return rc;
  x->ev_index++;
  return x->extras ? event_extras(x) : 0;
}

/* do_event for x->plain: a plain alloc or a free straight to its path, anything else
 * through do_event (no extras to run after an event) */
static inline __attribute__((always_inline)) int do_event_plain(struct replay *x, const struct event *ev) {
  int rc;
  if (ev->op == OP_ALLOC && !ev->pool && ev->size - 1 < HUGE_REQUEST - 1) rc = alloc_plain(x, ev);
  else if (ev->op == OP_FREE) rc = do_free(x, ev, 1);
  else return do_event(x, ev);
  if (rc) return rc;
  x->ev_index++;
  return 0;
}

static void progress(struct replay *x, uint64_t t_start, uint64_t *t_last) {
  uint64_t t = now_ns();
  if (t - t_start < 1000000000ull || t - *t_last < 500000000ull) return;
  *t_last = t;
  fprintf(stderr, "\r%s x %s: %llu events, %.1f M events/s   ", x->r->workload, x->r->allocator,
          (unsigned long long)x->ev_index, (double)x->ev_index / ((double)(t - t_start) / 1e9) / 1e6);
}

/* the strategy calls made so far (a request no strategy was asked for is none) */
static uint64_t strategy_calls(const struct replay *x) { return x->allocs - x->untimed_allocs + x->frees; }

/* ns per call from the loop's clock: host ns over calls, those timed on their own (their
 * spans, sampled ns over nsampled calls) left out where that leaves some; NaN for no calls */
static double mean_ns(uint64_t host, uint64_t calls, uint64_t sampled, uint64_t nsampled) {
  if (nsampled < calls && sampled < host) return (double)(host - sampled) / (double)(calls - nsampled);
  return calls ? (double)host / (double)calls : NAN;
}

static void fill_result(struct replay *x) {
  struct run_result *r = x->r;
  r->events = x->ev_index;
  r->allocs = x->allocs;
  r->frees = x->frees;
  r->peak_requested = x->m.peak_requested;
  r->peak_allocated = x->m.peak_allocated;
  r->peak_reserved = x->dev.peak_reserved;
  r->peak_least = x->peak_least;
  if (r->cap_blind || (x->ops && (x->ops->flags & ALLOC_CAP_COMPARED))) {   /* every read of the cap a comparison the device noted */
    r->same_lo = x->dev.same_lo ? x->dev.same_lo : 1;   /* a cap of 0 is none */
    r->same_hi = x->dev.same_hi;
  }
  r->internal_frag = x->m.internal_at_peak;
  r->ext_frag = x->m.ext_frag;
  if (r->peak_requested) {
    r->overhead = (double)r->peak_reserved / (double)r->peak_requested;
    r->frag = r->peak_reserved ? 1.0 - (double)r->peak_requested / (double)r->peak_reserved : NAN;
  }
  r->device_allocs = x->dev.c.device_allocs;
  r->device_frees = x->dev.c.device_frees;
  r->maps = x->dev.c.maps;
  r->unmaps = x->dev.c.unmaps;
  r->modeled_driver_ns = x->dev.c.modeled_ns;
  r->ns_per_op = mean_ns(x->host_ns, strategy_calls(x), x->sampled_ns, x->sampled_calls);
  r->p50_ns = hist_quantile(&x->hist, 0.50);
  r->p99_ns = hist_quantile(&x->hist, 0.99);
  r->max_ns = x->hist.max;
  r->timed_samples = x->hist.n;
  r->leak_bytes_per_iter = metrics_leak_slope(&x->m);
  r->model_err = x->ops && !x->is_cuda ? x->ops->model_err : 0;
  if (x->a && x->ops->stats) {
    struct alloc_stats st = {0};
    x->ops->stats(x->a, &st);
    r->cache_flushes = st.cache_flushes;
  }
}

/* The replay proper: events in batches, the batch timed as a whole. */
static int replay_loop(struct replay *x) {
  struct event own[BATCH];
  uint64_t t_start = now_ns(), t_last = t_start;
  int more = 1;
  while (more) {
    int n = 0, rc = 0;
    const struct event *buf = own;
    if (x->w.ops->span) {   /* where they lie (in memory, a generator's queue): no copy, no call per event */
      n = x->w.ops->span(x->w.st, &buf, BATCH, x->err);
      if (n < 0) {
        set_status(x->r, 2, "error: %s", x->err);
        return -1;
      }
      if (n == 0) break;   /* a short span is not the end: only none is */
    } else {
      while (n < BATCH && (rc = workload_next(&x->w, &own[n], x->err)) == 1) n++;
      if (rc < 0 && n < BATCH) {
        set_status(x->r, 2, "error: %s", x->err);
        return -1;
      }
      if (n < BATCH) more = 0;
    }
    uint64_t d0 = x->dev.c.modeled_ns + x->touch_ns, t0 = now_ns();
    rc = 0;
    if (x->plain) {
      for (const struct event *ev = buf, *end = buf + n; ev < end; ev++)
        if ((rc = do_event_plain(x, ev))) break;
    } else {
      for (const struct event *ev = buf, *end = buf + n; ev < end; ev++)
        if ((rc = do_event(x, ev))) break;
    }
    if (rc) {
      x->host_ns += now_ns() - t0;
      return rc;
    }
    uint64_t t = now_ns() - t0, dn = x->dev.c.modeled_ns + x->touch_ns - d0;   /* driver and touch time */
    x->host_ns += x->is_cuda ? (dn < t ? t - dn : 0) : t;
    if (x->s->progress) progress(x, t_start, &t_last);
  }
  if (x->s->progress && now_ns() - t_start > 1000000000ull) fputc('\n', stderr);
  return 0;
}

/* Free what the workload left live (untimed calls). */
static int free_live(struct replay *x, int check) {
  size_t n = 0;   /* in id order */
  if (x->live.direct) {   /* entries stay in their slots: straight from them */
    size_t *slots = livemap_sorted_slots(&x->live, LIVE_BLOCK, &n);
    for (size_t k = 0; k < n; k++)
      if (free_entry(x, slots[k], 0, 0, 0) && check) { free(slots); return -1; }
    free(slots);
  } else {   /* in id order (the map's slot order is seeded per run); out of memory: slot order below */
    uint64_t *ids = livemap_sorted_ids(&x->live, LIVE_BLOCK, &n);
    for (size_t k = 0; k < n; k++)
      if (free_entry(x, livemap_find(&x->live, ids[k]), 0, 0, 0) && check) { free(ids); return -1; }
    free(ids);
  }
  for (size_t i = 0; x->live.slots && x->live.count && i <= x->live.mask;) {   /* what is left (dropped entries), until none is */
    struct live_entry *e = &x->live.slots[i];
    if (e->state == LIVE_BLOCK) {
      if (free_entry(x, i, 0, 0, 0) && check) return -1;
      continue;   /* backward shift may have moved another entry into slot i */
    }
    if (e->state == LIVE_DROPPED) { livemap_del(&x->live, e); continue; }
    i++;
  }
  return 0;
}

/* Free what the workload left live, destroy the strategy, check nothing is held. */
static int teardown(struct replay *x, int check) {
  if (free_live(x, check)) return -1;
  if (x->validating && check && validator_counts(&x->v, x->err)) { set_status(x->r, 1, "error: %s", x->err); return -1; }
  x->ops->destroy(x->a);
  x->a = NULL;
  if (x->validating && check && validator_final(&x->v, x->err)) { set_status(x->r, 1, "error: %s", x->err); return -1; }
  return 0;
}

/* --warm passes (percall): the workload replayed again on the strategy as the last pass
 * left it (its cache kept; what the pass left live freed untimed first), as PyTorch's own
 * allocators are timed (tests/probes/torch_percall.cpp). Each pass's ns per call goes to
 * s->warm_ns[i] (NaN: the pass did not complete); the row's figures stay the first pass's. */
static void warm_passes(struct replay *x) {
  const struct run_spec *s = x->s;
  for (int p = 0; p < s->warm_passes; p++) s->warm_ns[p] = NAN;
  for (int p = 0; p < s->warm_passes; p++) {
    if (free_live(x, 1) || workload_rewind(&x->w, x->err)) return;
    uint64_t host = x->host_ns, sampled = x->sampled_ns, nsampled = x->sampled_calls, calls = strategy_calls(x);
    uint64_t oom = x->r->oom_count;
    if (replay_loop(x) || x->r->oom_count != oom) return;
    s->warm_ns[p] = mean_ns(x->host_ns - host, strategy_calls(x) - calls, x->sampled_ns - sampled, x->sampled_calls - nsampled);
  }
}

int replay_run(const struct run_spec *s, struct run_result *r) {
  struct replay *x = calloc(1, sizeof *x);
  if (!x) { set_status(r, 1, "error: %s", "out of host memory"); return 1; }
  x->read_ns = now_cost_ns();
  x->sample_tick = s->untimed ? INT64_MIN : 0;
  x->s = s;
  x->r = r;
  r->cap_bytes = s->cap_bytes;
  r->cap_x = s->cap_x;
  if (s->cap_source) snprintf(r->cap_source, sizeof r->cap_source, "%s", s->cap_source);
  r->cap_lo = s->cap_lo;
  r->cap_hi = s->cap_hi;
  r->seed = s->seed;
  uint64_t t_wall = now_ns();
  int dev_open = 0, wl_open = 0;

  if (device_open(&x->dev, &s->device, x->err)) { set_status(r, 1, "error: %s", x->err); goto out; }
  dev_open = 1;
  x->is_cuda = !strcmp(x->dev.ops->name, "cuda");
  if (x->is_cuda) snprintf(r->device, sizeof r->device, "cuda:%d", x->dev.index);
  else if (s->world > 1) snprintf(r->device, sizeof r->device, "sim:%d", x->dev.index);
  else snprintf(r->device, sizeof r->device, "sim");
  snprintf(r->device_name, sizeof r->device_name, "%s", x->dev.name);
  x->dev.track_ranges = s->validate;
  x->dev.by_stream = s->breakdown;
  device_set_cap(&x->dev, s->cap_bytes);
  x->dev.fail_rate = s->fail_rate;   /* set once; the seed picks the failures */
  if (s->fail_rate > 0) x->dev.fail_rng = (x->dev.fail_rng ^ (s->seed * 0x2545F4914F6CDD1Dull)) | 1;

  if (replay_open_workload(s, &x->w, x->dev.total, x->err)) { set_status(r, 2, "error: %s", x->err); goto out; }
  wl_open = 1;
  struct workload_info info;
  memset(&info, 0, sizeof info);
  if (x->w.ops->info) x->w.ops->info(x->w.st, &info);
  replay_workload_label(s, r->workload, sizeof r->workload);
  if (s->trace) snprintf(r->trace, sizeof r->trace, "%s", s->trace);
  r->trace_peak_reserved = info.trace_peak_reserved;
  if (info.unmodelled[0]) note_unmodelled(x, info.unmodelled);
  if (!x->is_cuda && !s->device.sim_usable && info.usable_bytes) x->dev.usable = info.usable_bytes;

  struct params ap;
  x->ops = replay_resolve_allocator(s, &info, &ap, x->dev.total, &r->params_from_trace, x->err);
  if (!x->ops) { set_status(r, 2, "error: %s", x->err); goto out; }
  snprintf(r->allocator, sizeof r->allocator, "%s", x->ops->name);
  replay_note_blindness(x->ops, &ap, r);
  params_format(&ap, r->params, sizeof r->params);
  alloc_conf_format(x->ops->name, &ap, r->alloc_conf, sizeof r->alloc_conf);
  if ((x->ops->flags & ALLOC_NEEDS_POOL) && !dev_has_pool(&x->dev)) {
    set_status(r, 0, "skipped: %s", "needs a GPU");
    goto out;
  }
  if (x->ops->create(&x->a, &x->dev, &ap, x->err)) {
    x->a = NULL;
    set_status(r, 2, "error: %s", x->err);
    goto out;
  }
  if (x->ops->flags & ALLOC_OFFLINE) {
    if (x->ops->plan(x->a, &x->w, x->err) || workload_rewind(&x->w, x->err)) {
      set_status(r, 2, "error: %s", x->err);
      goto out;
    }
  }
  uint32_t table = x->w.ctx.events ? x->w.ctx.events->slot_table : 0;   /* events held with their slots */
  if (table ? livemap_init_slots(&x->live, table) : livemap_init(&x->live, 4096)) { set_status(r, 1, "error: %s", "out of host memory"); goto out; }
  metrics_init(&x->m);
  note_reserved(x);
  x->validating = s->validate;
  snprintf(r->ns_per_op_includes, sizeof r->ns_per_op_includes, "%s%s%s%s%s", s->validate ? "validate" : "",   /* said in the row */
           s->validate && (s->timeline || s->verify) ? "+" : "", s->timeline ? "timeline" : "", s->timeline && s->verify ? "+" : "", s->verify ? "verify" : "");
  if (x->validating) validator_init(&x->v, x->ops, x->a, &x->dev);
  /* a stream-ordered pool places blocks by how far the GPU got through each stream: on
   * cuda its blocks are written in stream order by default, as a program's kernels would */
  x->touch = s->touch || (x->is_cuda && !s->no_touch && (x->ops->flags & ALLOC_STREAM_ORDERED));
  x->extras = x->validating || s->timeline || x->touch || s->verify;
  x->plain = !x->extras && !x->dev.by_stream && !s->least_floor;

  if (s->timeline) {
    timeline_init(&x->tl, s->timeline, s->timeline_label);
    timeline_name(&x->tl, r->allocator, r->params);
  }
  int rc = replay_loop(x);
  if (s->timeline) timeline_finish(&x->tl, x->ev_index, x->m.iters, x->m.live_requested, x->m.live_allocated, x->dev.reserved);
  fill_result(x);
  if (rc == 0 && !r->oom_count && s->warm_passes > 0 && !(x->ops->flags & ALLOC_OFFLINE)) warm_passes(x);
  if (rc == 1) {
    set_status(r, 0, "%s", "oom");
    r->completed = 0;
  } else if (rc == 0) {
    r->completed = 1;
    if (r->oom_count) set_status(r, 0, "%s", "oom");
  }
  if (teardown(x, rc >= 0) && rc >= 0) r->completed = 0;
  if (x->notes[0] && (status_is(r->status, "ok") || status_is(r->status, "oom")))
    snprintf(r->status + strlen(r->status), sizeof r->status - strlen(r->status), "%s", x->notes);
out:
  if (x->a) x->ops->destroy(x->a);
  if (x->validating) validator_release(&x->v);
  timeline_release(&x->tl);
  livemap_free(&x->live);
  if (wl_open) workload_close(&x->w);
  if (dev_open) device_close(&x->dev);
  r->wall_ns = now_ns() - t_wall;
  int cls = r->exit_class;
  free(x);
  return cls;
}
