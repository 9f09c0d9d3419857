/* oracle.c - the `oracle` reference row: what an allocator with perfect foresight needs.
 * plan() reads the whole workload (the harness rewinds it afterwards; a plan this process
 * made for the same workload already, or ahead through prepare(), is taken instead:
 * oracle_cache.c), and an offline planner (oracle_plan.c: greedy by size over lifetime
 * intervals, as static memory planners in inference compilers do) fixes every
 * allocation's offset in one arena. The replay then reserves exactly the plan's total -
 * one cudaMalloc, at the first request, so that a cap too small for the plan is an OOM
 * row - and hands the k-th allocation base + offset[k]. Frees and EMPTY_CACHE change
 * nothing. Memory is proportional to the trace, not to its live blocks; no per-op time
 * target applies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "oracle.h"

static const struct param_spec oracle_params[] = {
  {"gap", P_STR, "lowest", "where greedy by size puts each block: lowest (the lowest offset that fits) | best (the smallest gap that fits, as Pisarchyk & Lee's planner)"},
  {NULL, 0, NULL, NULL},
};

struct oracle {
  struct device *dev;
  struct oracle_plan plan;
  int planned;
  uint64_t base;
  int reserved;
  uint64_t next;          /* the allocation the replay makes next */
  uint64_t live_bytes;
  uint64_t last_start;    /* event index of the latest allocation handed out */
};

/* the gap rule: 0 lowest, 1 best, -1 (err) neither */
static int gap_rule(const struct params *p, char *err) {
  const char *gap = p ? param_str(p, "gap") : "";
  if (gap[0] && strcmp(gap, "lowest") && strcmp(gap, "best")) {
    snprintf(err, FB_ERRLEN, "oracle: gap=%s: expected lowest or best", gap);
    return -1;
  }
  return !strcmp(gap, "best");
}

static int oracle_create(void **a, struct device *d, const struct params *p, char *err) {
  int best = gap_rule(p, err);
  if (best < 0) return -1;
  struct oracle *o = calloc(1, sizeof *o);
  if (!o) { snprintf(err, FB_ERRLEN, "oracle: out of host memory"); return -1; }
  o->dev = d;
  o->plan.best_gap = best;
  *a = o;
  return 0;
}

static int oracle_prepare(const struct params *p, struct workload *w, char *err) {
  int best = gap_rule(p, err);
  return best < 0 ? -1 : oracle_plan_ahead(w, best, err);
}

static int oracle_plan(void *a, struct workload *w, char *err) {
  struct oracle *o = a;
  int best = o->plan.best_gap;
  oracle_plan_free(&o->plan);
  o->plan.best_gap = best;
  int made;
  if (oracle_plan_cached(&o->plan, w, &made, err)) return -1;
  o->planned = 1;
  o->next = 0;
  return 0;
}

static int oracle_alloc(void *a, uint64_t size, uint64_t stream, struct block *out) {
  struct oracle *o = a;
  struct oracle_plan *p = &o->plan;
  uint64_t k = o->next++;
  uint64_t rounded = (size + ORACLE_ALIGN - 1) / ORACLE_ALIGN * ORACLE_ALIGN;
  if (!o->planned || k >= p->n || p->size[k] != rounded) {
    snprintf(o->dev->err, FB_ERRLEN, "oracle: allocation #%llu of %llu bytes is not the plan's (%s): the replay must see the events the planning pass saw",
             (unsigned long long)k, (unsigned long long)size,
             !o->planned ? "no plan was made" : k >= p->n ? "the plan has fewer allocations" : "the plan's size differs");
    return -1;
  }
  if (!o->reserved) {
    int rc = dev_malloc(o->dev, p->arena, &o->base);
    if (rc) return rc;
    o->reserved = 1;
  }
  out->addr = o->base + p->offset[k];
  out->size = rounded;
  out->stream = stream;
  out->handle = (void *)(uintptr_t)k;
  o->live_bytes += rounded;
  o->last_start = p->start[k];
  return 0;
}

static void oracle_free(void *a, struct block *b) {
  struct oracle *o = a;
  o->live_bytes -= b->size;
}

static void oracle_empty_cache(void *a) { (void)a; }

struct gap_span { uint64_t off, end; };

static int by_off(const void *x, const void *y) {
  const struct gap_span *a = x, *b = y;
  return a->off < b->off ? -1 : a->off > b->off;
}

/* The largest free gap in the arena among the blocks the plan has live at the latest
 * allocation (what the replay holds then, when it was just handed out). */
static void oracle_query(void *a, uint64_t *largest_free, uint64_t *free_inside) {
  struct oracle *o = a;
  struct oracle_plan *p = &o->plan;
  uint64_t arena = o->reserved ? p->arena : 0;
  *free_inside = arena - o->live_bytes;
  *largest_free = *free_inside;
  if (!o->reserved || !o->next) return;
  uint64_t *hits = NULL, cap = 0;
  int64_t n = oracle_plan_overlapping(p, o->last_start, o->last_start + 1, o->next, &hits, &cap);
  struct gap_span *s = n > 0 ? malloc((size_t)n * sizeof *s) : NULL;
  if (n > 0 && s) {
    for (int64_t i = 0; i < n; i++) s[i] = (struct gap_span){p->offset[hits[i]], p->offset[hits[i]] + p->size[hits[i]]};
    qsort(s, (size_t)n, sizeof *s, by_off);
    uint64_t x = 0, best = 0;
    for (int64_t i = 0; i < n; i++) {
      if (s[i].off > x && s[i].off - x > best) best = s[i].off - x;
      if (s[i].end > x) x = s[i].end;
    }
    if (arena > x && arena - x > best) best = arena - x;
    *largest_free = best < *free_inside ? best : *free_inside;
  }
  free(s);
  free(hits);
}

static void oracle_stats(void *a, struct alloc_stats *st) {
  struct oracle *o = a;
  st->cache_flushes = 0;
  st->held = o->reserved ? o->plan.arena : 0;
}

static int oracle_check(void *a, char *err) {
  struct oracle *o = a;
  if (o->planned && o->next > o->plan.n) {
    snprintf(err, FB_ERRLEN, "oracle: %llu allocations replayed, the plan has %llu", (unsigned long long)o->next, (unsigned long long)o->plan.n);
    return -1;
  }
  if (o->planned && o->plan.arena < o->plan.peak_live) {
    snprintf(err, FB_ERRLEN, "oracle: the plan's arena (%llu) is below its own peak of live bytes (%llu)",
             (unsigned long long)o->plan.arena, (unsigned long long)o->plan.peak_live);
    return -1;
  }
  return 0;
}

static void oracle_destroy(void *a) {
  struct oracle *o = a;
  if (o->reserved) dev_free(o->dev, o->base, o->plan.arena);
  oracle_plan_free(&o->plan);
  free(o);
}

const struct allocator_ops oracle_allocator = {
  .name = "oracle",
  .help = "reference row: offsets planned offline over the whole workload (greedy by size over lifetimes), one arena of exactly the plan; memory proportional to the trace; no per-op time target",
  .anchor = "static memory planners: TFLite ArenaPlanner greedy by size; Pisarchyk & Lee, Efficient Memory Management for Deep Neural Net Inference (2020)",
  .params = oracle_params,
  .flags = ALLOC_OFFLINE,
  .alignment = ORACLE_ALIGN,
  .cap_blind = alloc_cap_blind_always,
  .create = oracle_create,
  .prepare = oracle_prepare,
  .alloc = oracle_alloc,
  .free = oracle_free,
  .empty_cache = oracle_empty_cache,
  .query = oracle_query,
  .stats = oracle_stats,
  .destroy = oracle_destroy,
  .plan = oracle_plan,
  .check = oracle_check,
};
