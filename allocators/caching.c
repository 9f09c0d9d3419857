/* caching.c - PyTorch's CUDA caching allocator (DeviceCachingAllocator in
 * c10/cuda/CUDACachingAllocator.cpp), decision for decision: cudaMalloc'd segments,
 * small and large pools, best fit per stream, splitting and coalescing (the pieces in
 * caching_policy.h), and malloc's failure path in PyTorch's order:
 *
 *   get_free_block -> [garbage_collect_cached_blocks, when a cap and a threshold are set]
 *   -> alloc_block -> release_available_cached_blocks + alloc_block
 *   -> release_cached_blocks + alloc_block (a retry: one cache flush) -> OOM
 *
 * The cap (d->cap) plays set_per_process_memory_fraction's allowed maximum; the device
 * layer refuses a cudaMalloc that would pass it, as alloc_block does.
 *
 * Private pools (CUDA graphs' capture pools, torch.cuda.MemPool: struct ppool), rule by
 * rule as CUDACachingAllocator.cpp has them:
 *   P1 PrivatePool owns a small and a large BlockPool of its own (owner_PrivatePool);
 *      get_pool sends an allocation made while a pool is the target there, so a private
 *      pool's blocks serve only its own allocations and the general pools never see them;
 *   P2 the segment sizing, rounding, best fit, split and coalescing rules are the same in
 *      every pool (alloc_block / alloc_found_block / free_block take p.pool);
 *   P3 malloc's failure path inside a private pool: release_available_cached_blocks acts
 *      on the request's own pool (p.pool); the full release_cached_blocks + retry only
 *      runs when no capture / MemPool context is underway (captures_underway.empty()):
 *      an allocation of a private pool never flushes the cache;
 *   P4 release_cached_blocks (empty_cache, the retry) frees the general pools' unsplit
 *      free blocks, then those of every pool in graph_pools_freeable, and no other: a
 *      live pool (use_count > 0) keeps its segments;
 *   P5 releasePool (the last graph / MemPool using the pool went away: OP_POOL_RELEASE)
 *      puts the pool in graph_pools_freeable; the pool is erased once it holds no segment;
 *   P6 emptyCache(pool) (MemPool's destructor) frees only that pool's unsplit free
 *      blocks, and only once it is freeable;
 *   P7 garbage_collect_cached_blocks looks only at the general large pool. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "allocator.h"
#include "caching_policy.h"
#include "caching_pool.h"
#include "event.h"

/* one cudaMalloc */
struct cseg {
  struct cblock *head;      /* its first block (first member: cseg_head) */
  struct ordnode node;      /* in caching.segs, by address */
  uint64_t addr, size, stream;
};
_Static_assert(offsetof(struct cseg, head) == 0, "struct cseg begins with head (caching_policy.h)");

/* PrivatePool: use_count > 0 until pool_release, then in graph_pools_freeable */
struct ppool {
  struct cpool small, large;
  uint64_t segments;        /* cudaMalloc_count: its segments still held */
  int freeable;
};

struct caching {
  struct device *dev;
  struct caching_config cfg;
  struct cpool small, large;
  struct ppool **pp;        /* private pools by id (1..EV_POOL_MAX); NULL until the first */
  uint64_t private_held;    /* bytes in private pools' segments */

  struct cblock_store store;
  struct ordset segs;
  uint64_t held;            /* total_allocated_memory: bytes in segments now */
  uint64_t cache_flushes;   /* num_alloc_retries */
  int hit_first;            /* no garbage_collection_threshold (no GC clock to tick): caching_alloc
                             * tries the cache before pool_alloc's general path */
};

static void caching_destroy(void *a);

static int seg_cmp(const struct ordnode *a, const struct ordnode *b) {
  uint64_t x = ORD_ENTRY(a, struct cseg, node)->addr, y = ORD_ENTRY(b, struct cseg, node)->addr;
  return x < y ? -1 : x > y;
}

static int caching_create(void **a, struct device *d, const struct params *p, char *err) {
  struct caching *c = calloc(1, sizeof *c);
  if (!c) { snprintf(err, FB_ERRLEN, "caching: out of host memory"); return -1; }
  if (caching_config_parse(p, &c->cfg, err)) { free(c); return -1; }
  c->hit_first = !(c->cfg.gc_threshold > 0);
  c->dev = d;
  cpool_init(&c->small, 1);
  cpool_init(&c->large, 0);
  cblock_store_init(&c->store);
  ordset_init(&c->segs, seg_cmp);
  if (cpool_prepare(&c->store, &c->small, &c->large)) {
    snprintf(err, FB_ERRLEN, "caching: out of host memory");
    caching_destroy(c);
    return -1;
  }
  *a = c;
  return 0;
}

static int gc_enabled(const struct caching *c) { return c->dev->cap && c->cfg.gc_threshold > 0; }

/* release_block: cudaFree an unsplit free block (a whole segment). */
static void release_block(struct caching *c, struct cblock *b) {
  struct cseg *s = b->seg;
  if (b->pool->owner) {
    c->pp[b->pool->owner]->segments--;
    c->private_held -= s->size;
  }
  cpool_erase(b->pool, b);
  dev_free(c->dev, s->addr, s->size);
  c->held -= s->size;
  ordset_erase(&c->segs, &s->node);
  free(s);
  cblock_put(&c->store, b);
}

/* alloc_block: one cudaMalloc of alloc_size; the new segment's single block in *out. */
static int alloc_block(struct caching *c, struct cpool *pool, uint64_t stream, uint64_t alloc_size, struct cblock **out) {
  uint64_t addr;
  int rc = dev_malloc(c->dev, alloc_size, &addr);
  if (rc) return rc;
  struct cstream *cs = cpool_stream(pool, stream, 1);
  struct cseg *s = cs ? malloc(sizeof *s) : NULL;
  if (!s) {
    dev_free(c->dev, addr, alloc_size);
    snprintf(c->dev->err, FB_ERRLEN, "caching: out of host memory");
    return -1;
  }
  s->addr = addr;
  s->size = alloc_size;
  s->stream = stream;
  struct cblock *b = cblock_take(&c->store);
  b->addr = addr;
  b->size = alloc_size;
  b->stream = stream;
  b->pool = pool;
  b->cs = cs;
  b->seg = s;
  s->head = b;
  ordset_insert(&c->segs, &s->node);
  c->held += alloc_size;
  if (pool->owner) {
    c->pp[pool->owner]->segments++;
    c->private_held += alloc_size;
  }
  *out = b;
  return 0;
}

/* garbage_collect_cached_blocks: free unsplit large blocks at least as old (in the
 * pool's get_free_block calls) as the average, pass after pass, until reserved is back
 * under threshold * cap or nothing more can go. */
static void garbage_collect(struct caching *c) {
  uint64_t gc_threshold = (uint64_t)(c->cfg.gc_threshold * (double)c->dev->cap);
  if (c->held <= gc_threshold) return;
  uint64_t target = c->held - gc_threshold, reclaimed = 0;
  struct cpool *pool = &c->large;
  uint64_t total_age = 0;
  int64_t freeable = 0;
  for (struct cblock *b = cpool_first(pool); b; b = cpool_next(b))
    if (!cblock_is_split(b)) { total_age += pool->get_free_calls - b->gc_base; freeable++; }
  if (freeable == 0) return;
  int freed = 1;
  while (reclaimed < target && freed && freeable > 0) {
    double age_threshold = (double)total_age / (double)freeable;
    freed = 0;
    struct cblock *b = cpool_first(pool);
    while (b) {
      struct cblock *next = cpool_next(b);
      uint64_t age = pool->get_free_calls - b->gc_base;
      if (!cblock_is_split(b) && (double)age >= age_threshold) {
        freed = 1;
        reclaimed += b->size;
        total_age -= age;
        freeable--;
        release_block(c, b);
      }
      b = next;
    }
  }
}

/* release_available_cached_blocks: with max_split_size set, free the smallest oversize
 * block of this stream that is at least max(size, max_split_size), or else oversize
 * blocks from the largest down until that much has gone. 1 if it freed enough. */
static int release_available(struct caching *c, struct cpool *pool, uint64_t stream, uint64_t size) {
  uint64_t mss = c->cfg.max_split_size;
  if (mss == CACHING_UNLIMITED) return 0;
  uint64_t want = size < mss ? mss : size;
  struct cblock *b = cpool_lower_bound(pool, stream, want);
  if (b) {
    release_block(c, b);
    return 1;
  }
  b = cpool_stream_last(pool, stream);         /* no single block: from the largest down */
  uint64_t released = 0;
  while (b && released < want && b->size >= mss) {
    struct cblock *prev = cpool_prev_in_stream(b);
    released += b->size;
    release_block(c, b);
    b = prev;
  }
  return released >= want;
}

/* release_blocks: free every unsplit free block of one pool */
static void release_blocks(struct caching *c, struct cpool *pool) {
  struct cblock *b = cpool_first(pool);
  while (b) {
    struct cblock *next = cpool_next(b);
    if (!cblock_is_split(b)) release_block(c, b);
    b = next;
  }
}

/* P4-P6: the freeable private pools' part of release_cached_blocks (only pool `only`
 * when not 0); a freeable pool left without segments is erased (graph_pools.erase) */
static void release_freeable(struct caching *c, uint32_t only) {
  if (!c->pp) return;
  for (uint32_t id = only ? only : 1; id <= (only ? only : EV_POOL_MAX); id++) {
    struct ppool *p = c->pp[id];
    if (!p || !p->freeable) continue;
    release_blocks(c, &p->small);
    release_blocks(c, &p->large);
    if (p->segments == 0) {
      cpool_destroy(&p->small);
      cpool_destroy(&p->large);
      free(p);
      c->pp[id] = NULL;
    }
  }
}

/* release_cached_blocks: free every unsplit free block, large pool then small, then the
 * freeable private pools' (P4). */
static void release_cached(struct caching *c) {
  release_blocks(c, &c->large);
  release_blocks(c, &c->small);
  release_freeable(c, 0);
}

/* malloc past get_free_block's miss: [GC], alloc_block, release_available + alloc_block,
 * release_cached + alloc_block. Out of line: a cache hit never runs it. */
static __attribute__((noinline)) int alloc_miss(struct caching *c, struct cpool *pool, uint64_t stream, uint64_t size,
                                                int gc, struct cblock **out) {
  uint64_t alloc_size = caching_allocation_size(size);
  if (gc) garbage_collect(c);
  int rc = alloc_block(c, pool, stream, alloc_size, out);
  if (rc == FB_OOM && release_available(c, pool, stream, size))
    rc = alloc_block(c, pool, stream, alloc_size, out);
  if (rc == FB_OOM && !pool->owner) {   /* P3: not while a private pool is the target */
    release_cached(c);
    c->cache_flushes++;
    rc = alloc_block(c, pool, stream, alloc_size, out);
  }
  return rc;
}

/* private pool `id`, made on its first allocation (beginAllocateToPool: a new PrivatePool);
 * NULL on host OOM. An allocation into a pool that was released makes it live again. */
static struct ppool *ppool_get(struct caching *c, uint32_t id) {
  if (!c->pp && !(c->pp = calloc(EV_POOL_MAX + 1, sizeof *c->pp))) return NULL;
  struct ppool *p = c->pp[id];
  if (!p) {
    if (!(p = calloc(1, sizeof *p))) return NULL;
    cpool_init(&p->small, 1);
    cpool_init(&p->large, 0);
    p->small.owner = p->large.owner = id;
    c->pp[id] = p;
  }
  p->freeable = 0;
  return p;
}

static __attribute__((noinline)) int pool_alloc(struct caching *c, uint64_t orig_size, uint64_t stream, uint32_t id, struct block *out) {
  if (cblock_store_reserve(&c->store, 2)) {   /* a new segment's block + a split's front */
    snprintf(c->dev->err, FB_ERRLEN, "caching: out of host memory");
    return -1;
  }
  uint64_t size = caching_round(&c->cfg, orig_size);
  struct cpool *pool;
  if (id) {                                   /* P1: get_pool with a capture underway */
    struct ppool *p = id <= EV_POOL_MAX ? ppool_get(c, id) : NULL;
    if (!p) {
      snprintf(c->dev->err, FB_ERRLEN, id <= EV_POOL_MAX ? "caching: out of host memory" : "caching: pool %u out of range (at most %d)",
               id, EV_POOL_MAX);
      return -1;
    }
    pool = caching_is_small(size) ? &p->small : &p->large;
  } else {
    pool = caching_is_small(size) ? &c->small : &c->large;
  }
  int gc = gc_enabled(c);
  if (gc) pool->get_free_calls++;
  struct cblock *b = take_best_fit(&c->cfg, pool, stream, size);
  if (!b) {
    int rc = alloc_miss(c, pool, stream, size, gc, &b);
    if (rc) return rc;
  }
  cblock_hand_out(&c->store, b, caching_should_split(&c->cfg, pool->is_small, 0, b->size, size), size,
                  orig_size, out);
  return 0;
}

/* A cache hit of pool 0 in few steps where the config allows it (pool_alloc's own steps:
 * no GC clock to tick, the store holding its two blocks); a miss changed nothing and goes
 * through pool_alloc from the start. */
static int caching_alloc(void *a, uint64_t orig_size, uint64_t stream, struct block *out) {
  struct caching *c = a;
  if (__builtin_expect(c->hit_first && c->store.nfree >= 2, 1)) {
    uint64_t size = caching_round(&c->cfg, orig_size);
    if (cpool_alloc_hit(&c->store, &c->cfg, caching_is_small(size) ? &c->small : &c->large, stream, size, orig_size, out))
      return 0;
  }
  return pool_alloc(c, orig_size, stream, 0, out);
}

static int caching_alloc_pool(void *a, uint64_t orig_size, uint64_t stream, uint32_t pool, struct block *out) {
  return pool_alloc(a, orig_size, stream, pool, out);
}

/* P5: releasePool */
static void caching_pool_release(void *a, uint32_t id) {
  struct caching *c = a;
  if (c->pp && id && id <= EV_POOL_MAX && c->pp[id]) c->pp[id]->freeable = 1;
}

/* P6: emptyCache(pool) */
static void caching_pool_empty(void *a, uint32_t id) {
  struct caching *c = a;
  if (!id) release_cached(c);
  else if (id <= EV_POOL_MAX) release_freeable(c, id);
}

/* free_block: coalesce with free neighbours, back into the pool. */
static void caching_free(void *a, struct block *blk) {
  struct caching *c = a;
  struct cblock *b = blk->handle;
  b->allocated = 0;
  cpool_free_block(&c->store, b, &b->seg->head);
}

static void caching_empty_cache(void *a) { release_cached(a); }

static void caching_query(void *a, uint64_t *largest_free, uint64_t *free_inside) {
  struct caching *c = a;
  uint64_t l = cpool_largest(&c->large), s = cpool_largest(&c->small);
  *largest_free = l > s ? l : s;
  *free_inside = c->large.free_bytes + c->small.free_bytes;
  for (uint32_t id = 1; c->pp && c->private_held && id <= EV_POOL_MAX; id++) {
    struct ppool *p = c->pp[id];
    if (!p) continue;
    uint64_t x = cpool_largest(&p->large), y = cpool_largest(&p->small);
    if (x > *largest_free) *largest_free = x;
    if (y > *largest_free) *largest_free = y;
    *free_inside += p->large.free_bytes + p->small.free_bytes;
  }
}

static void caching_segments(void *a, void (*fn)(void *ctx, const struct seg_block *b), void *ctx) {
  struct caching *c = a;
  for (struct ordnode *n = ordset_first(&c->segs); n; n = ordset_next(n)) {
    struct cseg *s = ORD_ENTRY(n, struct cseg, node);
    uint32_t id = s->head ? s->head->pool->owner : 0;
    cblock_chain_report(s->head, s->addr, s->size, s->head && s->head->pool->is_small, id && !c->pp[id]->freeable, fn, ctx);
  }
}

static void caching_stats(void *a, struct alloc_stats *st) {
  struct caching *c = a;
  st->cache_flushes = c->cache_flushes;
  st->held = c->held;
}

#define FAIL(...) do { snprintf(err, FB_ERRLEN, "caching: " __VA_ARGS__); return -1; } while (0)

/* Every segment's block chain is contiguous and covers it; free blocks sit in the right
 * pool's set, no two free blocks are neighbours; counts and byte totals agree. */
/* one pool's set: its blocks belong to it, in (stream, size, address) order; adds its
 * counts to *count, *bytes */
static int check_pool(struct cpool *p, const char *name, size_t *count, uint64_t *bytes, char *err) {
  size_t seen = 0;
  struct cblock *prev = NULL;
  for (struct cblock *b = cpool_first(p); b; prev = b, b = cpool_next(b), seen++) {
    if (b->pool != p || !b->in_pool || !b->cs || cpool_stream(p, b->stream, 0) != b->cs)
      FAIL("free block %#llx is in the wrong pool's set", (unsigned long long)b->addr);
    if (prev && (prev->stream > b->stream || (prev->stream == b->stream && (prev->size > b->size ||
                 (prev->size == b->size && prev->addr >= b->addr)))))
      FAIL("free blocks %#llx, %#llx out of (stream, size, address) order",
           (unsigned long long)prev->addr, (unsigned long long)b->addr);
  }
  size_t count_now = cpool_count(p);
  if (seen != count_now) FAIL("%s pool: %zu free blocks reachable of %zu", name, seen, count_now);
  *count += count_now;
  *bytes += p->free_bytes;
  return 0;
}

/* Every segment's block chain is contiguous and covers it; free blocks sit in the right
 * pool's set, no two free blocks are neighbours; counts and byte totals agree; a private
 * pool's segments are counted in it. */
static int caching_check(void *a, char *err) {
  struct caching *c = a;
  uint64_t held = 0, private_held = 0, free_in_chains = 0, free_in_sets = 0;
  size_t free_blocks = 0, in_sets = 0;
  for (struct ordnode *n = ordset_first(&c->segs); n; n = ordset_next(n)) {
    struct cseg *s = ORD_ENTRY(n, struct cseg, node);
    held += s->size;
    struct cblock *b = s->head;
    if (!b || b->prev || b->addr != s->addr)
      FAIL("segment %#llx: its first block is not at its start", (unsigned long long)s->addr);
    uint64_t pos = s->addr;
    struct cpool *pool = b->pool;
    if (pool->owner) {
      private_held += s->size;
      if (!c->pp || !c->pp[pool->owner] || (pool != &c->pp[pool->owner]->small && pool != &c->pp[pool->owner]->large))
        FAIL("segment %#llx: its pool %u is not a live private pool", (unsigned long long)s->addr, pool->owner);
    }
    for (; b; b = b->next) {
      if (b->seg != s || b->addr != pos || b->size == 0 || b->pool != pool || b->stream != s->stream)
        FAIL("segment %#llx: block at %#llx breaks the chain (expected %#llx)", (unsigned long long)s->addr,
             (unsigned long long)b->addr, (unsigned long long)pos);
      if (b->next && b->next->prev != b)
        FAIL("segment %#llx: broken prev link at %#llx", (unsigned long long)s->addr, (unsigned long long)b->next->addr);
      if (b->allocated == b->in_pool)
        FAIL("block %#llx: allocated=%d but in_pool=%d", (unsigned long long)b->addr, b->allocated, b->in_pool);
      if (!b->allocated) {
        if (b->next && !b->next->allocated)
          FAIL("segment %#llx: free neighbours at %#llx were not coalesced", (unsigned long long)s->addr, (unsigned long long)b->addr);
        free_blocks++;
        free_in_chains += b->size;
      }
      if (b->size % CACHING_MIN_BLOCK)
        FAIL("block %#llx: size %llu is not a multiple of 512", (unsigned long long)b->addr, (unsigned long long)b->size);
      pos += b->size;
    }
    if (pos != s->addr + s->size)
      FAIL("segment %#llx: blocks cover %llu of %llu bytes", (unsigned long long)s->addr,
           (unsigned long long)(pos - s->addr), (unsigned long long)s->size);
    if (pool->is_small != (s->size == CACHING_SMALL_BUFFER))
      FAIL("segment %#llx of %llu bytes is in the wrong pool", (unsigned long long)s->addr, (unsigned long long)s->size);
  }
  if (check_pool(&c->large, "large", &in_sets, &free_in_sets, err) || check_pool(&c->small, "small", &in_sets, &free_in_sets, err))
    return -1;
  for (uint32_t id = 1; c->pp && id <= EV_POOL_MAX; id++) {
    struct ppool *p = c->pp[id];
    if (!p) continue;
    if (check_pool(&p->large, "private large", &in_sets, &free_in_sets, err) ||
        check_pool(&p->small, "private small", &in_sets, &free_in_sets, err))
      return -1;
  }
  if (in_sets != free_blocks || free_in_sets != free_in_chains)
    FAIL("pools hold %zu free blocks (%llu bytes) but segments have %zu (%llu bytes)", in_sets,
         (unsigned long long)free_in_sets, free_blocks, (unsigned long long)free_in_chains);
  if (held != c->held || private_held != c->private_held)
    FAIL("segments hold %llu bytes (%llu private) but the count says %llu (%llu)", (unsigned long long)held,
         (unsigned long long)private_held, (unsigned long long)c->held, (unsigned long long)c->private_held);
  return 0;
}

static void caching_destroy(void *a) {
  struct caching *c = a;
  struct ordnode *n;
  while ((n = ordset_first(&c->segs))) {
    struct cseg *s = ORD_ENTRY(n, struct cseg, node);
    dev_free(c->dev, s->addr, s->size);
    ordset_erase(&c->segs, n);
    free(s);
  }
  cpool_destroy(&c->small);
  cpool_destroy(&c->large);
  for (uint32_t id = 1; c->pp && id <= EV_POOL_MAX; id++) {
    if (!c->pp[id]) continue;
    cpool_destroy(&c->pp[id]->small);
    cpool_destroy(&c->pp[id]->large);
    free(c->pp[id]);
  }
  free(c->pp);
  cblock_store_destroy(&c->store);
  free(c);
}

/* run --breakdown: requests up to kSmallSize (1 MiB) are served from the small pool
 * (2 MiB segments), larger ones from the large pool; rounding never crosses 1 MiB */
static const char *caching_pool_of(void *a, uint64_t size) {
  (void)a;
  return caching_is_small(size) ? "small" : "large";
}

/* the cap is read by the garbage collection threshold only (a fraction of it) */
static int caching_cap_blind(const struct params *p) {
  struct caching_config cfg;
  char err[FB_ERRLEN];
  return !caching_config_parse(p, &cfg, err) && !(cfg.gc_threshold > 0);   /* a setting it refuses: not said blind */
}

/* round_size: a block is never smaller than the request rounded */
static uint64_t caching_least_block(void *a, uint64_t size) {
  struct caching *c = a;
  return caching_round(&c->cfg, size);
}

const struct allocator_ops caching_allocator = {
  .name = "caching",
  .help = "PyTorch's CUDA caching allocator: 2 MiB / 20 MiB / own segments, best fit per stream, "
          "split, coalesce, release-and-retry",
  .anchor = "pytorch c10/cuda/CUDACachingAllocator.cpp",
  .validated = "PyTorch 2.11 native caching allocator (H100, make validate): peak reserved and peak allocated equal to the byte on 7 inputs, sim and cuda",
  .params = caching_param_spec,
  .alignment = CACHING_MIN_BLOCK,
  .cap_blind = caching_cap_blind,
  .least_block = caching_least_block,
  .create = caching_create,
  .alloc = caching_alloc,
  .free = caching_free,
  .empty_cache = caching_empty_cache,
  .query = caching_query,
  .stats = caching_stats,
  .destroy = caching_destroy,
  .check = caching_check,
  .segments = caching_segments,
  .pool_of = caching_pool_of,
  .alloc_pool = caching_alloc_pool,
  .pool_release = caching_pool_release,
  .pool_empty = caching_pool_empty,
};
