/* expandable.h - internal structures of the `expandable` strategy (allocators/expandable*.c):
 * PyTorch's CUDA caching allocator with expandable_segments:True (c10/cuda/
 * CUDACachingAllocator.cpp: ExpandableSegment, "Note [Expandable Segments]").
 *
 * One segment per (stream, pool) is a virtual range of 1 1/8 of the device's memory,
 * cut into pages of 2 MiB (small pool) or 20 MiB (large pool), each page a physical
 * allocation of its own, created and mapped on growth and unmapped and released when
 * wholly free under pressure or on EMPTY_CACHE. Every byte of a segment's range belongs
 * to exactly one block (struct cblock of caching_policy.h) in its address chain:
 *
 *   allocated     handed out (mapped)
 *   free mapped   in its pool's best-fit set (cpool: by stream, size, address)
 *   unmapped      mapped = 0; page-aligned at both ends; in its pool's unmapped set (by
 *                 stream, address); never next to another unmapped block
 *
 * The rest of the policy (rounding, pools, knobs, best fit, splitting, coalescing) is
 * caching_policy.h's. */
#ifndef FB_EXPANDABLE_H
#define FB_EXPANDABLE_H
#include <stddef.h>
#include <stdint.h>
#include "allocator.h"
#include "caching_policy.h"

#define EXP_SMALL_PAGE CACHING_SMALL_BUFFER   /* 2 MiB pages in the small pool */
#define EXP_LARGE_PAGE CACHING_LARGE_BUFFER   /* 20 MiB pages in the large pool */

struct epool;

/* ExpandableSegment: a reserved virtual range and the pages mapped into it */
struct cseg {
  struct cblock *head;      /* first block of the address chain (first member: cseg_head) */
  struct ordnode node;      /* in expandable.segs, by va */
  uint64_t va, size;        /* the reserved range: npages * page bytes */
  uint64_t page;            /* 2 MiB or 20 MiB */
  uint64_t npages;
  uint64_t mapped_pages;
  uint64_t pages_end;       /* no page at or after this index was ever mapped */
  uint64_t stream;
  struct epool *pool;
  uint64_t *handle;         /* per page: its physical handle while present */
  uint8_t *present;         /* per page: 1 while created and mapped (both arrays in one
                             * anonymous mapping, expandable_segment.c) */
};
_Static_assert(offsetof(struct cseg, head) == 0, "struct cseg begins with head (caching_policy.h)");

/* One of PyTorch's BlockPools: free mapped blocks (blocks) and unmapped ranges (unmapped) */
struct epool {
  struct cpool blocks;      /* first member: a cblock's pool pointer is &epool.blocks */
  struct ordset unmapped;   /* unmapped cblocks by (stream, address) */
  uint64_t page;
};

struct expandable {
  struct device *dev;
  struct caching_config cfg;
  struct epool small, large;
  struct cblock_store store;
  struct ordset segs;       /* every segment, by va */
  uint64_t held;            /* bytes of pages present (PyTorch's total_allocated_memory) */
  uint64_t cache_flushes;   /* num_alloc_retries */
  struct epair **pp;        /* private pools by id (1..EV_POOL_MAX); NULL until the first */
};

/* PyTorch's PrivatePool under expandable_segments:True: a small and a large BlockPool of
 * its own, each growing its own expandable segments (one per stream), like the general
 * ones; freeable once released (releasePool) */
struct epair {
  struct epool small, large;
  int freeable;
};

/* may release_cached_blocks touch this pool? only = 0: the general pools and the freeable
 * private ones (empty_cache, the retry); only = P: private pool P, if freeable (emptyCache(P)) */
static inline int exp_releasable(const struct expandable *e, const struct epool *p, uint32_t only) {
  uint32_t id = p->blocks.owner;
  if (only) return id == only && e->pp && e->pp[id] && e->pp[id]->freeable;
  return !id || (e->pp && e->pp[id] && e->pp[id]->freeable);
}

static inline struct epool *epool_of(const struct cblock *b) { return (struct epool *)(void *)b->pool; }

/* expandable_segment.c: segments, pages, and the block moves that map and unmap them */
void exp_pool_init(struct epool *p, int is_small);
/* find_expandable_block: the lowest-address unmapped range of this stream (with the free
 * block just before it, if any) that, with the free and unmapped blocks after it, spans
 * `size` bytes; a new segment if none does. NULL with *rc set (<0) on a device or host error. */
struct cblock *exp_find_expandable(struct expandable *e, struct epool *p, uint64_t stream, uint64_t size, int *rc);
/* map_block: create and map the pages covering the first `size` bytes of unmapped block b,
 * which becomes a free mapped block (merged with free neighbours) in the pool; its
 * unmapped rest stays after it. 0, FB_OOM (nothing created), or <0. */
int exp_map_block(struct expandable *e, struct cblock *b, uint64_t size);
/* unmap_block: unmap and release the whole pages inside free mapped block b; returns the
 * block that now holds b's position (b itself, unmapped, when pages went; else b). */
struct cblock *exp_unmap_block(struct expandable *e, struct cblock *b, int *unmapped);
/* release_cached_blocks: unmap every whole free page of every segment of the pools
 * exp_releasable(e, pool, only) admits; a segment left wholly unmapped by it gives its
 * virtual range back. */
void exp_release_cached(struct expandable *e, uint32_t only);
/* destroy: every page unmapped and released, every range freed */
void exp_destroy_segments(struct expandable *e);

/* expandable_check.c */
int exp_check(void *a, char *err);

#endif
