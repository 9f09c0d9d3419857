/* expandable.c - PyTorch's CUDA caching allocator with expandable_segments:True
 * (c10/cuda/CUDACachingAllocator.cpp, "Note [Expandable Segments]"): the strategy's
 * operations and malloc's decisions. Segments and pages are expandable_segment.c's
 * (see expandable.h); rounding, pools, knobs, splitting and coalescing are the caching
 * policy's (caching_policy.h). What differs from `caching`:
 *
 *   - get_free_block: best fit, except that a free block followed by unmapped space
 *     counts as that much larger ("expandable size"), so a block in the middle of a
 *     segment is preferred to the segment's growing end;
 *   - alloc_block: with a cap set, refuses when held + get_allocation_size(size) would
 *     pass it (PyTorch's memory-fraction check); else grows a segment: the lowest-address
 *     unmapped range of the stream's segment in this pool (with the free block before it)
 *     that spans the request gets just enough pages mapped (2 MiB small, 20 MiB large);
 *   - should_split: remainder >= 512 in both pools;
 *   - release_cached_blocks (the retry path after a failed growth, and EMPTY_CACHE)
 *     unmaps every wholly free page; nothing is ever cudaFree'd;
 *   - private pools (CUDA graphs, MemPool; caching.c's rules P1-P6): PyTorch 2.11 grows
 *     expandable segments for them too (their snapshot segments are is_expandable, made
 *     by segment_map), one per private BlockPool and stream; a private pool's blocks
 *     serve only its allocations, its allocations never run the release-and-retry, its
 *     pages are unmapped by release_cached_blocks only once the pool is released, and
 *     emptyCache(pool) unmaps only that released pool's.
 *
 * Two caching knobs act on blocks PyTorch only frees whole: garbage_collection_threshold
 * (frees unsplit blocks) and release_available_cached_blocks under max_split_size_mb
 * (cudaFrees oversize blocks). A block of an expandable segment is never unsplit (the
 * unmapped rest of its 1 1/8-of-the-device range is its neighbour) and is never
 * cudaFree'd, so both free nothing here (newer PyTorch skips expandable blocks in both
 * explicitly); the knobs are accepted as in PyTorch, and max_split_size_mb keeps its
 * oversize rules in best fit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "expandable.h"
#include "caching_pool.h"
#include "event.h"

static int seg_cmp(const struct ordnode *a, const struct ordnode *b) {
  uint64_t x = ORD_ENTRY(a, struct cseg, node)->va, y = ORD_ENTRY(b, struct cseg, node)->va;
  return x < y ? -1 : x > y;
}

/* private pool `id` (made on its first allocation; an allocation revives a released one);
 * NULL on host OOM */
static struct epair *epair_get(struct expandable *e, uint32_t id) {
  if (!e->pp && !(e->pp = calloc(EV_POOL_MAX + 1, sizeof *e->pp))) return NULL;
  struct epair *p = e->pp[id];
  if (!p) {
    if (!(p = calloc(1, sizeof *p))) return NULL;
    exp_pool_init(&p->small, 1);
    exp_pool_init(&p->large, 0);
    p->small.blocks.owner = p->large.blocks.owner = id;
    e->pp[id] = p;
  }
  p->freeable = 0;
  return p;
}

static void exp_destroy(void *a);

static int exp_create(void **a, struct device *d, const struct params *p, char *err) {
  struct expandable *e = calloc(1, sizeof *e);
  if (!e) { snprintf(err, FB_ERRLEN, "expandable: out of host memory"); return -1; }
  char sub[FB_ERRLEN];
  if (caching_config_parse(p, &e->cfg, sub)) {
    const char *msg = strncmp(sub, "caching: ", 9) ? sub : sub + 9;
    snprintf(err, FB_ERRLEN, "expandable: %.480s", msg);
    free(e);
    return -1;
  }
  e->dev = d;
  exp_pool_init(&e->small, 1);
  exp_pool_init(&e->large, 0);
  cblock_store_init(&e->store);
  ordset_init(&e->segs, seg_cmp);
  if (cpool_prepare(&e->store, &e->small.blocks, &e->large.blocks)) {
    snprintf(err, FB_ERRLEN, "expandable: out of host memory");
    exp_destroy(e);
    return -1;
  }
  *a = e;
  return 0;
}

/* get_free_block: the smallest free block of the stream that fits, then on to larger
 * ones while their expandable size is smaller; the oversize rules; taken out of the pool. */
static struct cblock *get_free_block(struct expandable *e, struct epool *p, uint64_t stream, uint64_t size) {
  struct cblock *b = cpool_lower_bound(&p->blocks, stream, size);
  if (!b) return NULL;
  for (struct cblock *n = cpool_next(b); n && n->stream == stream && cblock_expandable_size(n) < cblock_expandable_size(b);
       n = cpool_next(n))
    b = n;
  if (!caching_oversize_ok(&e->cfg, size, b->size)) return NULL;
  cpool_erase(&p->blocks, b);
  return b;
}

/* try_allocate_expandable_block: map what the lowest fitting range lacks; the block,
 * free and out of the pool, spans at least size bytes. */
static int try_allocate_expandable(struct expandable *e, struct epool *p, uint64_t stream, uint64_t size,
                                   struct cblock **out) {
  int rc = 0;
  struct cblock *c = exp_find_expandable(e, p, stream, size, &rc);
  if (!c) return rc;
  if (!c->mapped && (rc = exp_map_block(e, c, c->size < size ? c->size : size))) return rc;
  while (c->size < size) {           /* free -> unmapped -> ...: map into the next one */
    struct cblock *n = c->next;
    if (!n || n->mapped) {           /* find_expandable_block promised room */
      snprintf(e->dev->err, FB_ERRLEN, "expandable: no unmapped range after the block at %#llx to grow into",
               (unsigned long long)c->addr);
      return -1;
    }
    uint64_t missing = size - c->size;
    if ((rc = exp_map_block(e, n, missing < n->size ? missing : n->size))) return rc;
    c = n;                           /* n absorbed c */
  }
  cpool_erase(&p->blocks, c);
  *out = c;
  return 0;
}

/* alloc_block */
static int alloc_block(struct expandable *e, struct epool *p, uint64_t stream, uint64_t size, struct cblock **out) {
  if (dev_cap_breaks(e->dev, e->held + caching_allocation_size(size))) return FB_OOM;
  return try_allocate_expandable(e, p, stream, size, out);
}

static __attribute__((noinline)) int pool_alloc(struct expandable *e, uint64_t orig_size, uint64_t stream, uint32_t id, struct block *out) {
  if (cblock_store_reserve(&e->store, 1)) {   /* the split's front */
    snprintf(e->dev->err, FB_ERRLEN, "expandable: out of host memory");
    return -1;
  }
  uint64_t size = caching_round(&e->cfg, orig_size);
  struct epool *p;
  if (id) {                                   /* get_pool with a capture / MemPool underway */
    struct epair *pp = id <= EV_POOL_MAX ? epair_get(e, id) : NULL;
    if (!pp) {
      snprintf(e->dev->err, FB_ERRLEN, id <= EV_POOL_MAX ? "expandable: out of host memory" : "expandable: pool %u out of range (at most %d)",
               id, EV_POOL_MAX);
      return -1;
    }
    p = caching_is_small(size) ? &pp->small : &pp->large;
  } else {
    p = caching_is_small(size) ? &e->small : &e->large;
  }
  struct cblock *b = get_free_block(e, p, stream, size);
  if (!b) {
    int rc = alloc_block(e, p, stream, size, &b);
    if (rc == FB_OOM && !id) {                /* no release_cached_blocks while a pool is the target */
      exp_release_cached(e, 0);
      e->cache_flushes++;
      rc = alloc_block(e, p, stream, size, &b);
    }
    if (rc) return rc;
  }
  /* the release-and-retry path may have spent the block reserved above (unmapping splits
   * ranges): reserve the split's front again */
  if (cblock_store_reserve(&e->store, 1)) {
    snprintf(e->dev->err, FB_ERRLEN, "expandable: out of host memory");
    return -1;
  }
  cblock_hand_out(&e->store, b, caching_should_split(&e->cfg, p->blocks.is_small, 1, b->size, size), size,
                  orig_size, out);
  return 0;
}

/* A cache hit of pool 0 in one call where the store holds the split's front (pool_alloc's
 * own steps); a miss changed nothing and goes through pool_alloc from the start. */
static int exp_alloc(void *a, uint64_t orig_size, uint64_t stream, struct block *out) {
  struct expandable *e = a;
  if (__builtin_expect(e->store.nfree >= 1, 1)) {
    uint64_t size = caching_round(&e->cfg, orig_size);
    if (cpool_alloc_hit_expandable(&e->store, &e->cfg, caching_is_small(size) ? &e->small.blocks : &e->large.blocks, stream,
                                   size, orig_size, out))
      return 0;
  }
  return pool_alloc(e, orig_size, stream, 0, out);
}

static int exp_alloc_pool(void *a, uint64_t orig_size, uint64_t stream, uint32_t pool, struct block *out) {
  return pool_alloc(a, orig_size, stream, pool, out);
}

/* releasePool */
static void exp_pool_release(void *a, uint32_t id) {
  struct expandable *e = a;
  if (e->pp && id && id <= EV_POOL_MAX && e->pp[id]) e->pp[id]->freeable = 1;
}

/* emptyCache(pool) */
static void exp_pool_empty(void *a, uint32_t id) {
  if (id <= EV_POOL_MAX) exp_release_cached(a, id);
}

/* free_block: coalesce with free mapped neighbours, back into the pool. */
static void exp_free(void *a, struct block *blk) {
  struct expandable *e = a;
  struct cblock *b = blk->handle;
  b->allocated = 0;
  cpool_free_block(&e->store, b, &b->seg->head);
}

static void exp_empty_cache(void *a) { exp_release_cached(a, 0); }

static void exp_query(void *a, uint64_t *largest_free, uint64_t *free_inside) {
  struct expandable *e = a;
  uint64_t l = cpool_largest(&e->large.blocks), s = cpool_largest(&e->small.blocks);
  *largest_free = l > s ? l : s;
  *free_inside = e->large.blocks.free_bytes + e->small.blocks.free_bytes;
  for (uint32_t id = 1; e->pp && id <= EV_POOL_MAX; id++) {
    struct epair *p = e->pp[id];
    if (!p) continue;
    uint64_t x = cpool_largest(&p->large.blocks), y = cpool_largest(&p->small.blocks);
    if (x > *largest_free) *largest_free = x;
    if (y > *largest_free) *largest_free = y;
    *free_inside += p->large.blocks.free_bytes + p->small.blocks.free_bytes;
  }
}

static void exp_segments(void *a, void (*fn)(void *ctx, const struct seg_block *b), void *ctx) {
  struct expandable *e = a;
  for (struct ordnode *n = ordset_first(&e->segs); n; n = ordset_next(n)) {
    struct cseg *s = ORD_ENTRY(n, struct cseg, node);
    uint32_t id = s->pool->blocks.owner;
    cblock_chain_report(s->head, s->va, s->size, s->pool->blocks.is_small, id && !e->pp[id]->freeable, fn, ctx);
  }
}

static void exp_stats(void *a, struct alloc_stats *st) {
  struct expandable *e = a;
  st->cache_flushes = e->cache_flushes;
  st->held = e->held;
}

static void exp_destroy(void *a) {
  struct expandable *e = a;
  exp_destroy_segments(e);
  cpool_destroy(&e->small.blocks);
  cpool_destroy(&e->large.blocks);
  for (uint32_t id = 1; e->pp && id <= EV_POOL_MAX; id++) {
    if (!e->pp[id]) continue;
    cpool_destroy(&e->pp[id]->small.blocks);
    cpool_destroy(&e->pp[id]->large.blocks);
    free(e->pp[id]);
  }
  free(e->pp);
  cblock_store_destroy(&e->store);
  free(e);
}

/* run --breakdown: requests up to kSmallSize (1 MiB) are served from the small pool
 * (2 MiB segments), larger ones from the large pool; rounding never crosses 1 MiB */
static const char *exp_pool_of(void *a, uint64_t size) {
  (void)a;
  return caching_is_small(size) ? "small" : "large";
}

/* round_size: a block is never smaller than the request rounded */
static uint64_t exp_least_block(void *a, uint64_t size) {
  struct expandable *e = a;
  return caching_round(&e->cfg, size);
}

const struct allocator_ops expandable_allocator = {
  .name = "expandable",
  .help = "PyTorch's caching allocator with expandable_segments:True: one growing virtual range per "
          "stream and pool, 2 MiB / 20 MiB pages mapped at the lowest fitting address, free pages unmapped",
  .anchor = "pytorch c10/cuda/CUDACachingAllocator.cpp (ExpandableSegment)",
  .validated = "PyTorch 2.11 expandable_segments:True (H100, make validate): peak reserved and peak allocated equal to the byte on 7 inputs, sim and cuda",
  .params = caching_param_spec,
  .alignment = CACHING_MIN_BLOCK,
  .least_block = exp_least_block,
  .flags = ALLOC_CAP_COMPARED,
  .create = exp_create,
  .alloc = exp_alloc,
  .free = exp_free,
  .empty_cache = exp_empty_cache,
  .query = exp_query,
  .stats = exp_stats,
  .destroy = exp_destroy,
  .check = exp_check,
  .segments = exp_segments,
  .pool_of = exp_pool_of,
  .alloc_pool = exp_alloc_pool,
  .pool_release = exp_pool_release,
  .pool_empty = exp_pool_empty,
};
