/* test_pools_caching.c - PyTorch's private pools (CUDA graphs, torch.cuda.MemPool) in the
 * `caching` strategy, rule by rule as allocators/caching.c lists them (P1-P7, from
 * c10/cuda/CUDACachingAllocator.cpp: PrivatePool, get_pool, malloc's failure path,
 * release_cached_blocks, releasePool, emptyCache(mempool_id), garbage_collect_cached_blocks).
 * Each test fails when the rule it names is changed. Fixture: strategy_fixture.h. */
#define FX_NAME "caching"
#define FX_OPS caching_allocator
#include "strategy_fixture.h"
#include "../allocators/caching_policy.h"

#define PALLOC(f, blk, sz, st, pool) CHECK_EQ(OPS.alloc_pool((f)->a, (sz), (st), (pool), &(blk)), 0)

/* P1: a private pool's free block never serves a general allocation */
TEST(pools_caching_private_blocks_serve_only_their_pool) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block p, g, q;
  PALLOC(&f, p, MiB(4), 0, 1);               /* a 20 MiB segment of pool 1 */
  FREE(&f, p);
  ALLOC(&f, g, MiB(4), 0);                   /* general: a segment of its own */
  CHECK_EQ(f.d.c.device_allocs, 2);
  PALLOC(&f, q, MiB(4), 0, 1);               /* pool 1 again: its cached block */
  CHECK_EQ(f.d.c.device_allocs, 2);
  CHECK_EQ(q.addr, p.addr);
  FREE(&f, g);
  FREE(&f, q);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* P1: a general free block never serves a private pool, nor one pool another's */
TEST(pools_caching_general_and_other_pools_never_serve_a_pool) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block g, a, b;
  ALLOC(&f, g, MiB(4), 0);
  FREE(&f, g);
  PALLOC(&f, a, MiB(4), 0, 1);
  CHECK_EQ(f.d.c.device_allocs, 2);
  FREE(&f, a);
  PALLOC(&f, b, MiB(4), 0, 2);
  CHECK_EQ(f.d.c.device_allocs, 3);
  FREE(&f, b);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* P2: sizing and splitting are the general pools' in a private pool: a small request
 * gets a 2 MiB segment, a 4 MiB one a split 20 MiB segment whose rest serves the pool */
TEST(pools_caching_sizing_and_split_as_general) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block s, a, b;
  PALLOC(&f, s, 4096, 0, 1);
  CHECK_EQ(f.d.reserved, MiB(2));
  PALLOC(&f, a, MiB(4), 0, 1);
  CHECK_EQ(f.d.reserved, MiB(22));
  PALLOC(&f, b, MiB(15), 0, 1);              /* 16 MiB left in the 20 MiB segment: split */
  CHECK_EQ(f.d.reserved, MiB(22));
  CHECK_EQ(b.addr, a.addr + MiB(4));
  FREE(&f, s); FREE(&f, a); FREE(&f, b);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* P2: caching's own split rule in a private pool: a 1 MiB remainder of a large block stays attached */
TEST(pools_caching_private_split_rule_is_cachings) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block a;
  PALLOC(&f, a, MiB(12), 0, 1);
  FREE(&f, a);
  PALLOC(&f, a, MiB(11), 0, 1);
  CHECK_EQ(a.size, MiB(12));
  FREE(&f, a);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* P3: an allocation of a private pool never runs release_cached_blocks: with the general
 * pool's free segment in the way under the cap it is OOM, no flush */
TEST(pools_caching_private_allocation_never_flushes) {
  struct fx f;
  OPEN(&f, NULL, MiB(50));
  struct block g, x;
  ALLOC(&f, g, MiB(30), 0);
  FREE(&f, g);
  CHECK_EQ(OPS.alloc_pool(f.a, MiB(30), 0, 1, &x), FB_OOM);
  CHECK_EQ(flushes(&f), 0);
  CHECK_EQ(f.d.c.device_frees, 0);
  ALLOC(&f, x, MiB(30), 0);                  /* the general request still has its block */
  FREE(&f, x);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* P3: release_available_cached_blocks acts on the request's own pool: under max_split_size
 * a private pool's oversize free block goes back before its request fails */
TEST(pools_caching_release_available_in_the_requests_pool) {
  struct fx f;
  OPEN(&f, "max_split_size_mb=40", MiB(150));
  struct block o, x;
  PALLOC(&f, o, MiB(100), 0, 1);
  FREE(&f, o);
  PALLOC(&f, x, MiB(80), 0, 1);              /* 100 >= 80 + 20: refused; 100 + 80 > 150: pool 1's block freed */
  CHECK_EQ(f.d.c.device_frees, 1);
  CHECK_EQ(f.d.reserved, MiB(80));
  CHECK_EQ(flushes(&f), 0);
  FREE(&f, x);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* P4: empty_cache frees the general pools' unsplit free segments, not a live pool's */
TEST(pools_caching_empty_cache_keeps_a_live_pool) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block g, p;
  ALLOC(&f, g, MiB(30), 0);
  PALLOC(&f, p, MiB(30), 0, 1);
  FREE(&f, g);
  FREE(&f, p);
  OPS.empty_cache(f.a);
  CHECK_EQ(f.d.c.device_frees, 1);
  CHECK_EQ(f.d.reserved, MiB(30));
  CONSISTENT(&f);
  CLOSE(&f);
}

/* P4: the release-and-retry of a general allocation spares a live pool too: OOM */
TEST(pools_caching_retry_keeps_a_live_pool) {
  struct fx f;
  OPEN(&f, NULL, MiB(50));
  struct block p, x;
  PALLOC(&f, p, MiB(30), 0, 1);
  FREE(&f, p);
  CHECK_EQ(OPS.alloc(f.a, MiB(30), 0, &x), FB_OOM);
  CHECK_EQ(flushes(&f), 1);
  CHECK_EQ(f.d.c.device_frees, 0);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* P5: after releasePool, release_cached_blocks (empty_cache, or a general retry) frees
 * the pool's unsplit free segments; its split or live ones stay */
TEST(pools_caching_released_pool_freed_by_empty_cache_and_retry) {
  struct fx f;
  OPEN(&f, NULL, MiB(100));
  struct block a, b, c, x;
  PALLOC(&f, a, MiB(30), 0, 1);
  PALLOC(&f, b, MiB(4), 0, 1);               /* a split 20 MiB segment, kept live */
  FREE(&f, a);
  OPS.pool_release(f.a, 1);
  OPS.empty_cache(f.a);
  CHECK_EQ(f.d.c.device_frees, 1);
  CHECK_EQ(f.d.reserved, MiB(20));
  PALLOC(&f, c, MiB(30), 0, 2);              /* pool 2: 50 MiB */
  FREE(&f, c);
  OPS.pool_release(f.a, 2);
  ALLOC(&f, x, MiB(70), 0);                  /* 50 + 70 > 100: the retry frees pool 2's segment */
  CHECK_EQ(flushes(&f), 1);
  CHECK_EQ(f.d.c.device_frees, 2);
  FREE(&f, x); FREE(&f, b);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* P6: emptyCache(pool) frees only that released pool's segments */
TEST(pools_caching_pool_empty_frees_only_that_released_pool) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block g, a, b;
  ALLOC(&f, g, MiB(30), 0);
  PALLOC(&f, a, MiB(30), 0, 1);
  PALLOC(&f, b, MiB(30), 0, 2);
  FREE(&f, g); FREE(&f, a); FREE(&f, b);
  OPS.pool_empty(f.a, 1);                    /* pool 1 still live: nothing */
  CHECK_EQ(f.d.c.device_frees, 0);
  OPS.pool_release(f.a, 1);
  OPS.pool_release(f.a, 2);
  OPS.pool_empty(f.a, 1);
  CHECK_EQ(f.d.c.device_frees, 1);
  CHECK_EQ(f.d.reserved, MiB(60));
  OPS.empty_cache(f.a);                      /* the general one: general + pool 2 */
  CHECK_EQ(f.d.reserved, 0);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* P5: an allocation into a released pool makes it live again (a new capture into the
 * same pool id): empty_cache spares it */
TEST(pools_caching_allocation_revives_a_released_pool) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block a, b;
  PALLOC(&f, a, MiB(30), 0, 1);
  OPS.pool_release(f.a, 1);
  PALLOC(&f, b, MiB(30), 0, 1);
  FREE(&f, a); FREE(&f, b);
  OPS.empty_cache(f.a);
  CHECK_EQ(f.d.c.device_frees, 0);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* P7: garbage_collect_cached_blocks looks at the general large pool only */
TEST(pools_caching_gc_spares_private_pools) {
  struct fx f;
  OPEN(&f, "garbage_collection_threshold=0.5", MiB(100));
  struct block p, g, x;
  PALLOC(&f, p, MiB(40), 0, 1);
  ALLOC(&f, g, MiB(20), 0);
  FREE(&f, p);
  FREE(&f, g);
  ALLOC(&f, x, MiB(30), 0);                  /* a miss; held 60 > 50: GC frees the general 20 only */
  CHECK_EQ(f.d.c.device_frees, 1);
  CHECK_EQ(f.d.reserved, MiB(70));
  FREE(&f, x);
  CONSISTENT(&f);
  CLOSE(&f);
}
