/* random.c - `random`: a synthetic stream of `events` allocation events (and their frees)
 * with sizes log-uniform in [min, max], up to `live` blocks live at once, freed in random
 * order, on `streams` streams. Memory is O(live): used for engine and strategy speed
 * (make perf, 1 M and 10 M events) and as the default stress pattern. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "workload.h"

static const struct param_spec random_params[] = {
  {"events", P_INT, "1000000", "alloc + free events in the stream"},
  {"live", P_INT, "1000", "blocks live at once (steady state)"},
  {"min", P_BYTES, "512", "smallest request"},
  {"max", P_BYTES, "64MiB", "largest request (sizes are log-uniform in [min, max])"},
  {"streams", P_INT, "1", "streams the allocations are spread over"},
  {"iter_every", P_INT, "0", "an ITER event every N allocations (0 = none)"},
  {NULL, 0, NULL, NULL},
};

struct rnd {
  uint64_t events, live_max, min, max, streams, iter_every;
  double lmin, lmax;                   /* log(min), log(max) */
  uint64_t seed, rng, emitted, allocs, next_id;
  uint64_t *live; uint64_t nlive;      /* ids live now */
  int pending_iter;
};

static uint64_t next_u64(struct rnd *r) {
  uint64_t x = r->rng;
  x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
  r->rng = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static double unit(struct rnd *r) { return (double)(next_u64(r) >> 11) * (1.0 / 9007199254740992.0); }

static void reset(struct rnd *r) {
  r->rng = r->seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  if (!r->rng) r->rng = 1;
  r->emitted = r->allocs = r->nlive = 0;
  r->next_id = 1;
  r->pending_iter = 0;
}

static int random_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  struct rnd *r = calloc(1, sizeof *r);
  if (!r) return -1;
  r->events = (uint64_t)param_int(p, "events");
  r->live_max = (uint64_t)param_int(p, "live");
  r->min = param_bytes(p, "min");
  r->max = param_bytes(p, "max");
  r->streams = (uint64_t)param_int(p, "streams");
  r->iter_every = (uint64_t)param_int(p, "iter_every");
  r->lmin = log((double)r->min);
  r->lmax = log((double)r->max);
  if (!r->live_max || !r->min || r->max < r->min || !r->streams) {
    snprintf(err, FB_ERRLEN, "random: need live >= 1, streams >= 1 and 0 < min <= max");
    free(r);
    return -1;
  }
  r->live = malloc(r->live_max * sizeof *r->live);
  if (!r->live) { free(r); snprintf(err, FB_ERRLEN, "random: out of host memory"); return -1; }
  r->seed = ctx->seed ^ ((uint64_t)ctx->rank << 32);
  reset(r);
  *st = r;
  return 0;
}

static int random_next(void *st, struct event *ev, char *err) {
  (void)err;
  struct rnd *r = st;
  memset(ev, 0, sizeof *ev);
  if (r->pending_iter) { r->pending_iter = 0; ev->op = OP_ITER; return 1; }
  if (r->emitted >= r->events) {
    if (!r->nlive) return 0;
    ev->op = OP_FREE;            /* drain what is left */
    ev->id = r->live[--r->nlive];
    return 1;
  }
  r->emitted++;
  /* below the live target allocate, at it free one at random; in between, a coin flip */
  int do_alloc = r->nlive < r->live_max / 2 || (r->nlive < r->live_max && (next_u64(r) & 1));
  if (!do_alloc && r->nlive) {
    uint64_t k = next_u64(r) % r->nlive;
    ev->op = OP_FREE;
    ev->id = r->live[k];
    r->live[k] = r->live[--r->nlive];
    return 1;
  }
  ev->op = OP_ALLOC;
  ev->id = r->next_id++;
  ev->size = (uint64_t)exp(r->lmin + (r->lmax - r->lmin) * unit(r));
  if (ev->size < r->min) ev->size = r->min;
  ev->stream = r->streams > 1 ? next_u64(r) % r->streams : 0;
  r->live[r->nlive++] = ev->id;
  if (r->iter_every && ++r->allocs % r->iter_every == 0) r->pending_iter = 1;
  return 1;
}

static int random_rewind(void *st, char *err) {
  (void)err;
  reset(st);
  return 0;
}

static void random_close(void *st) {
  struct rnd *r = st;
  free(r->live);
  free(r);
}

const struct workload_ops random_workload = {
  .name = "random",
  .help = "log-uniform sizes, random frees, a bounded live set: engine and strategy speed, stress",
  .params = random_params,
  .open = random_open,
  .next = random_next,
  .rewind = random_rewind,
  .close = random_close,
};
