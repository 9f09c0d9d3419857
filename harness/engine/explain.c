/* explain.c - the memory at one moment of a trace under one strategy; see explain.h.
 * The strategy replays the events before the moment on the simulated device under the
 * cap (a pass of its own, so the state shown is the one before the request, not after a
 * failed request's release-and-retry), then is asked for its segments, then is given the
 * request to see whether it fits. */
#include "explain.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inputs.h"
#include "livemap.h"
#include "oom_evidence.h"
#include "replay_open.h"

struct ex {
  const struct event_buffer *b;
  struct run_spec spec;
  struct device dev;
  const struct allocator_ops *ops;
  void *a;
  struct livemap live;
  uint64_t allocated, requested;
  struct explain_state *st;
  char *err;
};

static void ex_close(struct ex *x) {
  if (x->a) {
    size_t n = 0;   /* id order: the map's slot order is seeded per run */
    uint64_t *ids = livemap_sorted_ids(&x->live, LIVE_BLOCK, &n);
    for (size_t k = 0; k < n; k++) {
      struct live_entry *e = livemap_get(&x->live, ids[k]);
      x->ops->free(x->a, &e->b);
      e->state = LIVE_DROPPED;
    }
    free(ids);
    for (size_t i = 0; x->live.slots && i <= x->live.mask; i++)
      if (x->live.slots[i].state == LIVE_BLOCK) x->ops->free(x->a, &x->live.slots[i].b);
    x->ops->destroy(x->a);
    x->a = NULL;
  }
  livemap_free(&x->live);
  device_close(&x->dev);
}

/* a fresh device and strategy: 0, or the exit class with err */
static int ex_open(struct ex *x) {
  if (device_open(&x->dev, &x->spec.device, x->err)) return 1;
  device_set_cap(&x->dev, x->spec.cap_bytes);
  if (!x->spec.device.sim_usable && x->b->info.usable_bytes) x->dev.usable = x->b->info.usable_bytes;
  struct params ap;
  int adopted = 0;
  x->ops = replay_resolve_allocator(&x->spec, &x->b->info, &ap, x->dev.total, &adopted, x->err);
  if (!x->ops) { device_close(&x->dev); return 2; }
  if (x->ops->flags & (ALLOC_NEEDS_POOL | ALLOC_OFFLINE)) {
    snprintf(x->err, FB_ERRLEN, "explain: %s %s; explain replays on the simulated device, one event at a time", x->ops->name,
             x->ops->flags & ALLOC_NEEDS_POOL ? "needs a GPU" : "plans over the whole trace first");
    device_close(&x->dev);
    return 2;
  }
  snprintf(x->st->allocator, sizeof x->st->allocator, "%s", x->ops->name);
  params_format(&ap, x->st->params, sizeof x->st->params);
  if (x->ops->create(&x->a, &x->dev, &ap, x->err)) { x->a = NULL; device_close(&x->dev); return 2; }
  if (livemap_init(&x->live, 4096)) { snprintf(x->err, FB_ERRLEN, "out of host memory"); ex_close(x); return 1; }
  x->allocated = x->requested = 0;
  return 0;
}

/* replay events [0, end): the index of the first alloc that fails (-1: none), -2 on a
 * device error; *peak_at: the event after which reserved was highest */
static int64_t ex_replay(struct ex *x, uint64_t end, uint64_t *peak_at) {
  uint64_t peak = 0;
  for (uint64_t i = 0; i < end; i++) {
    const struct event *ev = &x->b->ev[i];
    if (ev->op == OP_ALLOC) {
      if (!ev->size || ev->size >= HUGE_REQUEST) continue;
      struct live_entry *e = livemap_slot(&x->live, ev->id);
      if (!e) { snprintf(x->err, FB_ERRLEN, "out of host memory"); return -2; }
      if (e->state == LIVE_BLOCK) continue;   /* an id already live: replay skips it too */
      e->b = (struct block){0};
      int rc = alloc_in_pool(x->ops, x->a, ev->size, ev->stream, ev->pool, &e->b);
      if (rc == FB_OOM) return (int64_t)i;
      if (rc < 0) { snprintf(x->err, FB_ERRLEN, "%s", x->dev.err[0] ? x->dev.err : "device error"); return -2; }
      livemap_commit_requested(&x->live, e, ev->id, LIVE_BLOCK, ev->size);
      x->allocated += e->b.size;
      x->requested += ev->size;
    } else if (ev->op == OP_FREE) {
      struct live_entry *e = livemap_get(&x->live, ev->id);
      if (!e || e->state != LIVE_BLOCK) continue;
      x->allocated -= e->b.size;
      x->requested -= e->requested;
      x->ops->free(x->a, &e->b);
      livemap_del(&x->live, e);
    } else if (ev->op == OP_EMPTY_CACHE || ev->op == OP_POOL_RELEASE) {
      pool_event(x->ops, x->a, ev);
    }
    if (peak_at && x->dev.reserved > peak) { peak = x->dev.reserved; *peak_at = i; }
  }
  return -1;
}

static void collect(void *ctx, const struct seg_block *b) {
  struct explain_state *st = ctx;
  if (st->nblocks == st->cap_blocks) {
    size_t nc = st->cap_blocks ? st->cap_blocks * 2 : 256;
    struct seg_block *nb = realloc(st->blocks, nc * sizeof *nb);
    if (!nb) return;   /* the view stops short; the totals stand */
    st->blocks = nb;
    st->cap_blocks = nc;
  }
  if (!st->nblocks || st->blocks[st->nblocks - 1].seg_addr != b->seg_addr) st->nsegments++;
  st->blocks[st->nblocks++] = *b;
  if (b->state == SEG_FREE || b->state == SEG_INACTIVE_SPLIT) st->free_pieces++;
  if (b->state == SEG_FREE && !b->pool_live) { st->releasable += b->size; st->releasable_segments++; }   /* a live pool's stays */
}

/* the moment named by o->at: 0, or 2 with err */
static int resolve_at(const struct explain_opts *o, const struct event_buffer *b, struct explain_state *st, char *err) {
  const char *at = o->at;
  if (!at) at = st->ci.oom_event >= 0 ? "oom" : "peak";
  if (!strcmp(at, "oom")) {
    if (st->ci.oom_event < 0) {
      snprintf(err, FB_ERRLEN, "--at oom: %s has no OOM (no oom entry in its device trace); use --at peak or --at EVENT (0..%llu)",
               o->trace, (unsigned long long)(b->n ? b->n - 1 : 0));
      return 2;
    }
    st->event = st->ci.oom_event;
    st->at_oom = 1;
    return 0;
  }
  if (!strcmp(at, "peak")) { st->at_peak = 1; return 0; }
  char *end;
  unsigned long long v = strtoull(at, &end, 10);
  if (!*at || *end || at[0] == '-') {
    snprintf(err, FB_ERRLEN, "--at '%s': expected oom, peak or an event index (0..%llu)", at, (unsigned long long)(b->n ? b->n - 1 : 0));
    return 2;
  }
  if (v >= b->n) {
    snprintf(err, FB_ERRLEN, "--at %llu: past the end: %s has %llu events (0..%llu)", v, o->trace, (unsigned long long)b->n,
             (unsigned long long)(b->n ? b->n - 1 : 0));
    return 2;
  }
  if (b->ev[v].op != OP_ALLOC) {
    uint64_t next = v;
    while (next < b->n && b->ev[next].op != OP_ALLOC) next++;
    int k = snprintf(err, FB_ERRLEN, "--at %llu: event %llu is %s %s, not an alloc (explain shows the memory at an allocation", v, v,
                     b->ev[v].op == OP_EMPTY_CACHE ? "an" : "a", op_name(b->ev[v].op));
    if (k > 0 && k < FB_ERRLEN) {
      if (next < b->n) snprintf(err + k, (size_t)(FB_ERRLEN - k), "; the next is event %llu)", (unsigned long long)next);
      else snprintf(err + k, (size_t)(FB_ERRLEN - k), "; none follows it: try --at peak)");
    }
    return 2;
  }
  st->event = (int64_t)v;
  st->at_oom = (int64_t)v == st->ci.oom_event;
  return 0;
}

int explain_run(const struct explain_opts *o, struct explain_state *st, char *err) {
  memset(st, 0, sizeof *st);
  st->asked_event = -1;
  struct event_buffer own_b;   /* read here where the command holds no copy (inputs.h) */
  const struct event_buffer *b = inputs_get_or_load(o->trace, o->trace_device, &own_b, err);
  if (!b) return 2;
  st->events = b->n;
  st->info = b->info;
  int rc = 0;
  struct ex x;
  memset(&x, 0, sizeof x);
  if (o->cap) { st->cap = o->cap; st->cap_source = "given"; }
  if ((rc = cap_infer_events(b, o->trace, o->trace_device, &st->ci, err))) goto out;
  if (!st->ci.has_oom) st->ci.oom_event = -1;
  if (!o->cap && !o->no_infer_cap && st->ci.has_oom) { st->cap = st->ci.cap; st->cap_source = "inferred"; }
  if ((rc = resolve_at(o, b, st, err))) goto out;

  x.b = b;
  x.st = st;
  x.err = err;
  x.spec.trace = o->trace;
  x.spec.events = b;
  x.spec.trace_device = o->trace_device;
  x.spec.world = 1;
  x.spec.allocator = o->allocator ? o->allocator : "recorded";
  x.spec.device.kind = "sim";
  x.spec.device.sim_total = st->cap > SIM_TOTAL_DEFAULT ? st->cap : SIM_TOTAL_DEFAULT;
  x.spec.cap_bytes = st->cap;
  if (st->at_peak) {   /* a first pass finds the peak */
    if ((rc = ex_open(&x))) goto out;
    uint64_t peak_at = 0;
    int64_t f = ex_replay(&x, b->n, &peak_at);
    ex_close(&x);
    if (f == -2) { rc = 1; goto out; }
    st->event = f >= 0 ? f : (int64_t)peak_at + 1;
    if (f >= 0) { st->at_peak = 0; st->asked_event = (int64_t)b->n; }
  }
  if ((rc = ex_open(&x))) goto out;
  int64_t f = ex_replay(&x, (uint64_t)st->event, NULL);
  if (f == -2) { rc = 1; ex_close(&x); goto out; }
  if (f >= 0) {   /* it fails earlier: show that moment instead */
    ex_close(&x);
    if (st->asked_event < 0) st->asked_event = st->event;
    st->event = f;
    st->at_oom = f == st->ci.oom_event;
    if ((rc = ex_open(&x))) goto out;
    if (ex_replay(&x, (uint64_t)f, NULL) == -2) { rc = 1; ex_close(&x); goto out; }
  }
  st->reserved = x.dev.reserved;
  st->allocated = x.allocated;
  st->requested_live = x.requested;
  x.ops->query(x.a, &st->largest_free, &st->free_inside);
  if (x.ops->segments) {
    st->has_segments = 1;
    x.ops->segments(x.a, collect, st);
    explain_block_ids(st, &x.live);
  }
  if ((uint64_t)st->event < b->n && b->ev[st->event].op == OP_ALLOC && !st->at_peak) {
    const struct event *ev = &b->ev[st->event];
    st->has_request = 1;
    st->request = ev->size;
    st->stream = ev->stream;
    st->rounded = ev->size < 512 ? 512 : (ev->size + 511) / 512 * 512;
    st->segment = oom_segment_size(st->rounded, !strcmp(st->allocator, "expandable"));
    struct block blk = {0};
    int a = alloc_in_pool(x.ops, x.a, ev->size, ev->stream, ev->pool, &blk);
    st->fits = a == 0;
    if (a == 0) x.ops->free(x.a, &blk);
  }
  ex_close(&x);
  if (st->at_oom) explain_frames(o->trace, o->trace_device, st);
  if (o->block_frames) explain_block_frames(o->trace, o->trace_device, b, st);
out:
  event_buffer_free(&own_b);
  return rc;
}

void explain_free(struct explain_state *st) {
  for (size_t i = 0; st->block_frames && i < st->nblocks; i++) free(st->block_frames[i]);
  free(st->block_frames);
  free(st->block_id);
  st->block_frames = NULL;
  st->block_id = NULL;
  free(st->blocks);
  st->blocks = NULL;
  st->nblocks = st->cap_blocks = 0;
}
