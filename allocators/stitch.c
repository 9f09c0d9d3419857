/* stitch.c - the `stitch` strategy's policy, after GMLake (ASPLOS'24, "GMLake: Efficient
 * and Transparent GPU Memory Defragmentation for Large-scale DNN Training with Virtual
 * Memory Stitching"). Structures and invariants: stitch.h.
 *
 * A large request (> 1 MiB, rounded to 512 B; `large_round=2MiB` gives GMLake's own
 * page rounding) is served, in this order:
 *   1. best fit over free blocks of its stream: primitive ranges (split at 512 B), and
 *      stitched ranges (views) it fills to within their last page whose pages are all
 *      free at home - reused without mapping;
 *   2. stitching, no new memory: the smallest view r fits in whose first pages (those r
 *      needs) are free, r served from its front without mapping (its other pages wait
 *      idle, lent to it); else, if the free pages held (counting those of wholly free
 *      small and stitched ranges and idle ones, given back on demand) are enough, a view
 *      with few busy pages has just those remapped, or the pages are mapped into a new VA
 *      range at consecutive offsets, in few runs; where r ends inside a page, the free
 *      end of a page begun at home serves as that page;
 *   3. growth: only the shortfall is created - or fewer pages, where mapping them right
 *      after a free block makes one block that fits (the expandable-segments move) -
 *      then 1 or 2 again. If creating fails (cap), every free page is released (the
 *      EMPTY_CACHE pass, one cache flush) and the request retried once, then FB_OOM.
 * Small requests (<= 1 MiB) use best fit with splitting in single lent pages, as
 * PyTorch's small pool does in 2 MiB segments (a compact suballocator of our own; the
 * caching strategy's policy header is tied to its own block and segment records).
 * Reserved memory is only ever the pages created: mapping a page into a stitched range
 * does not add to it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stitch.h"

static const struct param_spec stitch_params[] = {
  {"max_stitched", P_INT, "128", "wholly free stitched ranges kept mapped for reuse; beyond this the least recently used is unmapped"},
  {"large_round", P_BYTES, "512", "round requests > 1 MiB up to a multiple of this (2MiB = GMLake's own page rounding)"},
  {"handle_max", P_BYTES, "2MiB", "most bytes per physical handle, a multiple of 2 MiB (2MiB: a handle per page, as GMLake; 0: one per growth). A stitched range maps only whole free handles: larger ones cost fewer driver calls and stitch less (more memory)"},
  {"grow_whole", P_BOOL, "0", "with handle_max above 2MiB: grow by whole handles of handle_max bytes, as expandable segments grow by whole 20 MiB pages (the spare pages wait free for the next requests): fewer handles, less to stitch"},
  {NULL, 0, NULL, NULL},
};

static uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

static uint64_t round_request(const struct stitch *st, uint64_t size) {
  uint64_t r = size < ST_MIN_BLOCK ? ST_MIN_BLOCK : round_up(size, ST_MIN_BLOCK);
  if (r > ST_SMALL_MAX && st->large_round > ST_MIN_BLOCK) r = round_up(round_up(r, st->large_round), ST_MIN_BLOCK);
  return r;
}

static void place(struct stitch *st, struct sblock *b, uint64_t r, uint64_t stream, struct block *out) {
  free_erase(b);
  if (b->size - r >= ST_MIN_BLOCK) free_insert(sb_split(st, b, r));
  b->kind = BK_ALLOC;
  range_busy_inc(st, b->r);
  if (b->r->kind == RK_PRIM) prim_busy(b->r, b->addr, b->size, 1);
  st->live_bytes += b->size;
  out->addr = b->addr;
  out->size = b->size;
  out->stream = stream;
  out->handle = b;
}

/* Best fit over primitive free blocks, free blocks of busy stitched ranges and views
 * whose pages are all free, where r fills a stitched one to within its last page (it is
 * never carved into a smaller one). */
static struct sblock *best_fit_large(struct stitch *st, struct spool *p, uint64_t r) {
  struct sblock *a = stitch_fset_lower_bound(&p->prim_free, r);
  if (p->stitch_free.count) {
    struct sblock *s = stitch_fset_lower_bound(&p->stitch_free, r);
    if (s && s->size - r < ST_PAGE && (!a || stitch_blocks_cmp_size(&s->node, &a->node) < 0)) a = s;
  }
  if (!a && st->views.count) {
    struct srange *v = stitch_views_find(p, r, 1);
    if (v) {
      stitch_views_take(st, v, r);
      st->stitched_reused++;
      a = v->first;
    }
  }
  return a;
}

/* Make `npages` whole free pages lendable, giving back wholly free small and stitched
 * ranges' pages; after each, a freshly merged block may fit r (if r) and is returned.
 * *touched (if given) is set when anything was given back (the free blocks changed). */
static struct sblock *reclaim_for(struct stitch *st, struct spool *p, uint64_t npages, uint64_t r, int *touched) {
  struct sblock *b;
  while (stitch_ranges_pages_free_total(st) < npages) {
    if (touched) *touched = 1;
    if (!stitch_ranges_reclaim_one(st, p, npages - stitch_ranges_pages_free_total(st))) break;
    if (r && (b = best_fit_large(st, p, r))) return b;
  }
  return NULL;
}

/* Step 2: stitch free pages (no new memory) into a range for r, or say how many whole
 * free pages that needs (returned in *need when it returns 1). */
static int stitch_step(struct stitch *st, struct spool *p, uint64_t r, uint64_t npages, struct sblock **out, uint64_t *need) {
  uint64_t head = r - (npages - 1) * ST_PAGE;   /* bytes r takes of its last page */
  if (head == ST_PAGE) head = 0;
  struct sblock *frag = head ? stitch_ranges_head_fragment(p, head) : NULL;   /* serves r's last page */
  *need = frag ? npages - 1 : npages;
  if (stitch_ranges_pages_avail_total(st) < *need) return 1;
  int touched = 0;
  if ((*out = reclaim_for(st, p, *need, r, &touched))) return 0;
  if (stitch_ranges_pages_free_total(st) < *need) return 1;   /* pages given back that are not whole handles at home */
  if (head && touched) frag = stitch_ranges_head_fragment(p, head);   /* reclaiming merged blocks: may have taken it, or made one */
  if (!frag) head = 0;
  if (!head && stitch_ranges_pages_free_total(st) < npages) {
    *need = npages;
    if ((*out = reclaim_for(st, p, npages, r, NULL))) return 0;
    if (stitch_ranges_pages_free_total(st) < npages) return 1;
  }
  stitch_views_mark_wanted(p, r);
  struct srange *s = stitch_views_find(p, r, 0);
  if (s) {   /* a larger view's front: no mapping */
    stitch_views_take(st, s, r);
    st->stitched_reused++;
    *out = s->first;
    return 0;
  }
  s = head || st->handle_pages != 1 ? NULL : stitch_views_repairable(p, r, stitch_ranges_pages_free_total(st));   /* repair replaces single pages */
  int rc;
  if (s) {
    rc = stitch_views_repair(st, s, r);
    st->stitched_repaired += !rc;
  } else {
    rc = stitch_ranges_build_stitched(st, p, npages, head, frag, &s);
    st->stitched_built += !rc;
  }
  if (rc) return rc < 0 ? rc : -1;
  *out = s->first;
  return 0;
}

static int alloc_large(struct stitch *st, struct spool *p, uint64_t r, struct block *out) {
  uint64_t npages = (r + ST_PAGE - 1) / ST_PAGE, need = npages;
  int flushed = 0;
  for (;;) {
    struct sblock *b = best_fit_large(st, p, r);
    if (!b) {
      int rc = stitch_step(st, p, r, npages, &b, &need);
      if (rc < 0) return rc;
    }
    if (b) {
      place(st, b, r, p->stream, out);
      return 0;
    }
    int extended;
    uint64_t avail = stitch_ranges_pages_avail_total(st);
    int rc = stitch_ranges_grow(st, p, r, need > avail ? need - avail : 1, &extended);
    if (rc == FB_OOM && !flushed) {
      stitch_ranges_release_free_pages(st);
      st->cache_flushes++;
      flushed = 1;
      continue;
    }
    if (rc) return rc;
  }
}

static int alloc_small(struct stitch *st, struct spool *p, uint64_t r, struct block *out) {
  int flushed = 0;
  for (;;) {
    struct sblock *b = stitch_fset_lower_bound(&p->small_free, r);
    if (b) { place(st, b, r, p->stream, out); return 0; }
    if (stitch_ranges_pages_avail_total(st) >= 1) {
      reclaim_for(st, p, 1, 0, NULL);
      struct srange *s;
      int rc = stitch_ranges_build_small(st, p, &s);
      if (rc) return rc;
      place(st, s->first, r, p->stream, out);
      return 0;
    }
    int extended;
    int rc = stitch_ranges_grow(st, p, ST_PAGE, 1, &extended);
    if (rc == FB_OOM && !flushed) {
      stitch_ranges_release_free_pages(st);
      st->cache_flushes++;
      flushed = 1;
      continue;
    }
    if (rc) return rc;
  }
}

static int stitch_alloc(void *a, uint64_t size, uint64_t stream, struct block *out) {
  struct stitch *st = a;
  struct spool *p = pool_get(st, stream);
  uint64_t r = round_request(st, size);
  return r <= ST_SMALL_MAX ? alloc_small(st, p, r, out) : alloc_large(st, p, r, out);
}

static void stitch_free(void *a, struct block *blk) {
  struct stitch *st = a;
  struct sblock *b = blk->handle;
  struct srange *r = b->r;
  st->live_bytes -= b->size;
  if (r->kind == RK_PRIM) prim_busy(r, b->addr, b->size, -1);
  free_coalesce_insert(st, b);
  range_busy_dec(st, r);
}

static void stitch_empty_cache(void *a) { stitch_ranges_release_free_pages(a); }

static uint64_t largest_in(const struct fset *s) {
  struct sblock *b = stitch_fset_last(s);
  return b ? b->size : 0;
}

static void stitch_query(void *a, uint64_t *largest_free, uint64_t *free_inside) {
  struct stitch *st = a;
  uint64_t best = stitch_ranges_pages_avail_total(st) * ST_PAGE;   /* free pages can be stitched into one */
  for (int i = 0; i < st->npools; i++) {
    struct spool *p = st->pools[i];
    uint64_t m = largest_in(&p->prim_free);
    if (largest_in(&p->stitch_free) > m) m = largest_in(&p->stitch_free);
    if (largest_in(&p->small_free) > m) m = largest_in(&p->small_free);
    if (m > best) best = m;
  }
  *free_inside = st->held - st->live_bytes;
  *largest_free = best < *free_inside ? best : *free_inside;
}

static void stitch_stats(void *a, struct alloc_stats *s) {
  struct stitch *st = a;
  s->cache_flushes = st->cache_flushes;
  s->held = st->held;
}

static int stitch_create(void **a, struct device *d, const struct params *p, char *err) {
  struct stitch *st = calloc(1, sizeof *st);
  if (!st) { snprintf(err, FB_ERRLEN, "stitch: out of host memory"); return -1; }
  st->dev = d;
  const char *ms = p ? param_str(p, "max_stitched") : "";
  const char *lr = p ? param_str(p, "large_round") : "";
  const char *hm = p ? param_str(p, "handle_max") : "";
  uint64_t handle_max = ST_PAGE;
  if (hm[0] && (parse_bytes(hm, p->percent_base, &handle_max) || handle_max % ST_PAGE)) {
    snprintf(err, FB_ERRLEN, "stitch: handle_max must be 0 or a multiple of 2 MiB (got '%s')", hm);
    free(st);
    return -1;
  }
  st->handle_pages = handle_max / ST_PAGE;
  st->grow_whole = p && param_bool(p, "grow_whole") && st->handle_pages > 1;
  int64_t max = ms[0] ? strtoll(ms, NULL, 10) : 128;
  uint64_t round = 512;
  if (lr[0] && parse_bytes(lr, p->percent_base, &round)) round = 0;
  if (max < 0 || round == 0 || round % ST_MIN_BLOCK) {
    snprintf(err, FB_ERRLEN, "stitch: max_stitched must be >= 0 and large_round a positive multiple of 512 (got '%s', '%s')", ms, lr);
    free(st);
    return -1;
  }
  st->max_stitched = (uint64_t)max;
  st->large_round = round;
  st->prim_va = round_up(d->total ? d->total : (1ull << 40), ST_PAGE);
  *a = st;
  return 0;
}

static void stitch_destroy(void *a) {
  struct stitch *st = a;
  stitch_ranges_destroy(st);
  free(st);
}

const struct allocator_ops stitch_allocator = {
  .name = "stitch",
  .help = "GMLake-style virtual memory stitching: free 2 MiB pages mapped into one new range before any new memory is created",
  .anchor = "GMLake (ASPLOS'24), intelligent-machine-learning/glake GMLake/src/CUDACachingAllocator.cpp",
  .params = stitch_params,
  .alignment = 512,
  .cap_blind = alloc_cap_blind_always,
  .create = stitch_create,
  .alloc = stitch_alloc,
  .free = stitch_free,
  .empty_cache = stitch_empty_cache,
  .query = stitch_query,
  .stats = stitch_stats,
  .destroy = stitch_destroy,
  .check = stitch_check,
};
