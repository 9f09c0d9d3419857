/* test_pools_expandable.c - private pools (CUDA graphs, MemPool) under expandable_segments:True
 * (allocators/expandable.c): PyTorch 2.11 grows expandable segments for a private pool as
 * for the general ones (its snapshot segments are is_expandable, made by segment_map), one
 * per private BlockPool and stream; the private pool rules of caching (P1-P6) hold. Each
 * test fails when the rule it names is changed. Fixture: strategy_fixture.h. */
#define FX_NAME "expandable"
#define FX_OPS expandable_allocator
#include "strategy_fixture.h"
#include "../allocators/caching_policy.h"

#define PALLOC(f, blk, sz, st, pool) CHECK_EQ(OPS.alloc_pool((f)->a, (sz), (st), (pool), &(blk)), 0)

/* a private pool grows a segment of its own: a new virtual range, pages mapped into it;
 * the general pool's free page does not serve it, nor its pages the general pool */
TEST(pools_expandable_private_pool_has_its_own_segments) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block g, p, q;
  ALLOC(&f, g, MiB(4), 0);                   /* general: one 20 MiB page */
  FREE(&f, g);
  PALLOC(&f, p, MiB(4), 0, 1);               /* pool 1: another range, another page */
  CHECK_EQ(f.d.c.va_reserves, 2);
  CHECK_EQ(f.d.c.maps, 2);
  CHECK_EQ(f.d.reserved, MiB(40));
  FREE(&f, p);
  ALLOC(&f, q, MiB(8), 0);                   /* general again: its own free page */
  CHECK_EQ(f.d.c.maps, 2);
  CHECK_EQ(q.addr, g.addr);
  FREE(&f, q);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* one private pool's segment never serves another pool */
TEST(pools_expandable_pools_apart) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block a, b;
  PALLOC(&f, a, MiB(4), 0, 1);
  FREE(&f, a);
  PALLOC(&f, b, MiB(4), 0, 2);
  CHECK_EQ(f.d.c.va_reserves, 2);
  CHECK_EQ(f.d.reserved, MiB(40));
  FREE(&f, b);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* empty_cache unmaps the general pages and keeps a live pool's; once released, its
 * pages go too; emptyCache(pool) unmaps only that released pool's */
TEST(pools_expandable_empty_cache_keeps_live_frees_released) {
  struct fx f;
  OPEN(&f, NULL, 0);
  struct block p, q, g;
  PALLOC(&f, p, MiB(30), 0, 1);
  PALLOC(&f, q, MiB(30), 0, 2);
  ALLOC(&f, g, MiB(20), 0);
  FREE(&f, p); FREE(&f, q); FREE(&f, g);
  OPS.empty_cache(f.a);
  CHECK_EQ(f.d.reserved, MiB(80));
  OPS.pool_release(f.a, 1);
  OPS.pool_release(f.a, 2);
  OPS.pool_empty(f.a, 1);
  CHECK_EQ(f.d.reserved, MiB(40));
  OPS.empty_cache(f.a);
  CHECK_EQ(f.d.reserved, 0);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* a private pool's growth that fails under the cap never runs the release-and-retry */
TEST(pools_expandable_private_growth_never_flushes) {
  struct fx f;
  OPEN(&f, NULL, MiB(60));
  struct block g, x;
  ALLOC(&f, g, MiB(40), 0);
  FREE(&f, g);
  CHECK_EQ(OPS.alloc_pool(f.a, MiB(30), 0, 1, &x), FB_OOM);
  CHECK_EQ(flushes(&f), 0);
  CHECK_EQ(f.d.reserved, MiB(40));
  ALLOC(&f, x, MiB(30), 0);                  /* general: the pages it has */
  FREE(&f, x);
  CONSISTENT(&f);
  CLOSE(&f);
}

/* a general growth's retry unmaps a released pool's free pages, not a live one's */
TEST(pools_expandable_retry_frees_released_pool_only) {
  struct fx f;
  OPEN(&f, NULL, MiB(80));
  struct block p, q, x;
  PALLOC(&f, p, MiB(30), 0, 1);              /* 40 MiB of pages */
  PALLOC(&f, q, MiB(20), 0, 2);              /* 20 MiB */
  FREE(&f, p); FREE(&f, q);
  CHECK_EQ(OPS.alloc(f.a, MiB(30), 0, &x), FB_OOM);   /* 60 + 40 > 80, nothing releasable */
  CHECK_EQ(flushes(&f), 1);
  OPS.pool_release(f.a, 1);
  ALLOC(&f, x, MiB(30), 0);                  /* the retry unmaps pool 1's 40 MiB */
  CHECK_EQ(f.d.reserved, MiB(60));
  FREE(&f, x);
  CONSISTENT(&f);
  CLOSE(&f);
}
