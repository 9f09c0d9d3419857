/* caching_policy.h - the reusable parts of PyTorch's CUDACachingAllocator policy
 * (c10/cuda/CUDACachingAllocator.cpp, c10/core/AllocatorConfig.cpp), shared by the
 * `caching` strategy (caching.c) and meant for `expandable` (expandable_segments:True):
 *
 *   - the knobs (max_split_size_mb, max_non_split_rounding_mb, roundup_power2_divisions,
 *     garbage_collection_threshold): their param_spec table and parsing (caching_config.c);
 *   - request rounding (round_size), segment sizing (get_allocation_size), pool choice,
 *     the split rule (should_split) and the oversize rules of get_free_block;
 *   - Block structs with prev/next neighbours inside a segment, kept on a free list for
 *     reuse (no heap allocation per event), and the per-pool best-fit set of free blocks
 *     ordered by (stream, size, address) with O(log n) lookups (caching_pool.c);
 *   - split-off-the-front and coalesce-with-free-neighbours, as alloc_found_block and
 *     free_block/try_merge_blocks do them.
 *
 * What a strategy owns itself: where segments come from (cudaMalloc vs mapped pages),
 * its segment records (struct cseg is opaque here), and its failure path. */
#ifndef FB_CACHING_POLICY_H
#define FB_CACHING_POLICY_H
#include <stdint.h>
#include "ordset.h"
#include "params.h"
#include "allocator.h"

/* PyTorch's constants */
#define CACHING_MIN_BLOCK       512ull          /* kMinBlockSize: every size rounds to a multiple */
#define CACHING_SMALL_SIZE      (1ull << 20)    /* kSmallSize: largest "small" request (1 MiB) */
#define CACHING_SMALL_BUFFER    (2ull << 20)    /* kSmallBuffer: small-pool segment (2 MiB) */
#define CACHING_LARGE_BUFFER    (20ull << 20)   /* kLargeBuffer: segment for 1..10 MiB (20 MiB) */
#define CACHING_MIN_LARGE_ALLOC (10ull << 20)   /* kMinLargeAlloc: from here, a segment of its own */
#define CACHING_ROUND_LARGE     (2ull << 20)    /* kRoundLarge: own segments round to 2 MiB */
#define CACHING_MIB             (1ull << 20)
#define CACHING_ROUNDUP_INTERVALS 16            /* 1 MiB .. 64 GiB, one per power of two */
#define CACHING_UNLIMITED       UINT64_MAX      /* max_split_size when not set */

struct caching_config {
  uint64_t max_split_size;          /* bytes; CACHING_UNLIMITED = none (PyTorch's SIZE_MAX) */
  uint64_t max_non_split_rounding;  /* bytes; default kLargeBuffer */
  uint64_t roundup_divisions[CACHING_ROUNDUP_INTERVALS];  /* 0 or 1 = plain 512 B rounding */
  double gc_threshold;              /* 0 = off; else 0 < t < 1 (fraction of the cap) */
  int plain_rounding;               /* no roundup_power2_divisions apply (set by caching_config_parse) */
};

/* The knobs with PyTorch's defaults (NULL-key terminated), for allocator_ops.params. */
extern const struct param_spec caching_param_spec[];

/* Fill cfg from checked params (defaults where not given). 0, or -1 with err naming the key. */
int caching_config_parse(const struct params *p, struct caching_config *cfg, char *err);
/* PyTorch's roundup_power2_divisions syntax: one power of two ("4"), or per interval
 * "[256:1,512:2,>:8]" with keys in MiB (powers of two) and values 0 or powers of two. */
int caching_parse_roundup(const char *text, uint64_t div[CACHING_ROUNDUP_INTERVALS], char *err);

static inline int caching_is_pow2(uint64_t x) { return x && !(x & (x - 1)); }
static inline int caching_log2_floor(uint64_t x) { return 63 - __builtin_clzll(x); }   /* x > 0 */

/* roundup_power2_next_division: e.g. 1200 with 4 divisions -> 1280 (1024, 1280, 1536, 1792). */
static inline uint64_t caching_next_division(uint64_t size, uint64_t divisions) {
  if (caching_is_pow2(size)) return size;
  uint64_t floor2 = 1ull << caching_log2_floor(size);
  uint64_t step = floor2 >> caching_log2_floor(divisions);
  if (step == 0) return floor2 << 1;
  uint64_t down = size & ~(step - 1);
  return down == size ? size : down + step;
}

/* round_size: < 512 -> 512; else the power-of-2 division where one applies
 * (AllocatorConfig::roundup_power2_divisions(size): interval log2(size) - 20, clamped),
 * else up to 512. Inline: advise replays most settings with divisions. */
static inline uint64_t caching_round_size(const struct caching_config *c, uint64_t size) {
  if (size < CACHING_MIN_BLOCK) return CACHING_MIN_BLOCK;
  int lg = caching_log2_floor(size);
  int index = lg > 20 ? lg - 20 : 0;
  if (index > CACHING_ROUNDUP_INTERVALS - 1) index = CACHING_ROUNDUP_INTERVALS - 1;
  uint64_t divisions = c->roundup_divisions[index];
  if (divisions > 1 && size > CACHING_MIN_BLOCK * divisions) return caching_next_division(size, divisions);
  return (size + CACHING_MIN_BLOCK - 1) / CACHING_MIN_BLOCK * CACHING_MIN_BLOCK;
}
/* round_size when no roundup_power2_divisions apply (every entry 0 or 1) */
static inline uint64_t caching_round_size_plain(uint64_t size) {
  return size < CACHING_MIN_BLOCK ? CACHING_MIN_BLOCK : (size + CACHING_MIN_BLOCK - 1) & ~(CACHING_MIN_BLOCK - 1);
}
/* round_size of a parsed config: the 512 B round-up inline where no division applies */
static inline uint64_t caching_round(const struct caching_config *c, uint64_t size) {
  return c->plain_rounding ? caching_round_size_plain(size) : caching_round_size(c, size);
}

/* get_allocation_size: small -> 2 MiB; < 10 MiB -> 20 MiB; else rounded up to 2 MiB. */
static inline uint64_t caching_allocation_size(uint64_t rounded) {
  if (rounded <= CACHING_SMALL_SIZE) return CACHING_SMALL_BUFFER;
  if (rounded < CACHING_MIN_LARGE_ALLOC) return CACHING_LARGE_BUFFER;
  return (rounded + CACHING_ROUND_LARGE - 1) / CACHING_ROUND_LARGE * CACHING_ROUND_LARGE;
}

/* get_pool: rounded <= 1 MiB is small. */
static inline int caching_is_small(uint64_t rounded) { return rounded <= CACHING_SMALL_SIZE; }

/* get_free_block's oversize rules: may a request of `rounded` bytes take a cached block
 * of `block_size`? A request under max_split_size never takes a block >= max_split_size;
 * one at or above it never takes a block >= request + max_non_split_rounding. */
static inline int caching_oversize_ok(const struct caching_config *c, uint64_t rounded, uint64_t block_size) {
  if (rounded < c->max_split_size && block_size >= c->max_split_size) return 0;
  if (rounded >= c->max_split_size && block_size >= rounded + c->max_non_split_rounding) return 0;
  return 1;
}

/* should_split: small pool (or expandable segments): remainder >= 512; large pool:
 * remainder > 1 MiB and the request below max_split_size. */
static inline int caching_should_split(const struct caching_config *c, int small_pool, int expandable,
                                       uint64_t block_size, uint64_t rounded) {
  uint64_t remaining = block_size - rounded;
  if (small_pool || expandable) return remaining >= CACHING_MIN_BLOCK;
  return rounded < c->max_split_size && remaining > CACHING_SMALL_SIZE;
}

/* ---- blocks, pools ---------------------------------------------------------------- */

struct cseg;              /* a strategy's segment record (opaque here); each strategy's begins
                           * with its first block's pointer, `struct cblock *head` (cseg_head) */
struct cpool;
struct cstream;           /* one stream's free blocks in one pool (caching_pool.c) */

/* The fields a free's merge reads of each neighbour (the flags, addr, size, prev, next)
 * and a bin's descent (node, size, addr) come first, within the block's first 72 bytes:
 * a neighbour check touches one cache line where the flags at the end took two. */
struct cblock {
  struct ordnode node;      /* in its size bin's set while free (in_pool) */
  uint8_t allocated;
  uint8_t in_pool;
  uint8_t mapped;           /* 1 unless an expandable segment's unmapped range */
  uint16_t bin;             /* its size bin while in_pool (set by cpool_insert) */
  uint64_t addr, size;      /* size after rounding / the segment piece */
  struct cblock *prev, *next;  /* address neighbours in the same segment */
  uint64_t stream;
  struct cstream *cs;       /* its stream's record in pool: cpool_stream(pool, stream, 1) */
  struct cpool *pool;
  uint64_t requested;       /* what the request asked for (allocated blocks) */
  uint64_t gc_base;         /* pool->get_free_calls when it entered the pool */
  struct cseg *seg;
};

static inline int cblock_is_split(const struct cblock *b) { return b->prev || b->next; }

/* &seg->head: every struct cseg begins with it (checked where each is defined) */
static inline struct cblock **cseg_head(struct cseg *s) { return (struct cblock **)(void *)s; }

/* one segment's block chain for allocator_ops.segments (caching_pool.c); its pool is its
 * blocks' pool's owner, pool_live whether that private pool is not yet released */
void cblock_chain_report(const struct cblock *head, uint64_t seg_addr, uint64_t seg_size, int small_pool, int pool_live,
                         void (*fn)(void *ctx, const struct seg_block *b), void *ctx);

/* One of PyTorch's BlockPools: the free blocks of every stream, in the order of
 * BlockComparatorSize, (stream, size, address). Inside a stream the blocks are spread
 * over size bins (32 per power of two, a bitmap of the non-empty ones), each bin in
 * (size, address) order (caching_bin.h: a short list, a treap past it): a best fit looks
 * at one small set and then at most the first block of the next non-empty bin, so lookups
 * stay O(log n) in the worst case and touch a handful of nodes in practice. */
struct cpool {
  struct ordset streams;    /* struct cstream by stream id */
  struct ordset largest;    /* the streams holding free blocks, by (largest free block, id):
                             * cpool_largest reads its last, whatever the number of streams */
  struct cstream *stale;    /* streams whose free blocks changed since cpool_largest last
                             * placed them in largest (each once; linked through the stream) */
  struct cstream *last;     /* the last one looked up */
  uint64_t free_bytes;      /* their total size */
  uint64_t get_free_calls;  /* get_free_blocks_call_count: the GC age clock */
  int is_small;
  uint32_t owner;           /* BlockPool::owner_PrivatePool: 0 = the general pools, else the
                             * private pool (event.h) whose small_blocks / large_blocks this is */
};

/* Freed Block structs are kept for reuse; new ones come from 256-block slabs. */
struct cblock_slab;
struct cblock_store {
  struct cblock *free_list;   /* linked through ->next */
  struct cblock_slab *slabs;
  size_t nfree;               /* blocks on free_list */
};

void cblock_store_init(struct cblock_store *s);
void cblock_store_destroy(struct cblock_store *s);   /* frees every slab */
int cblock_store_grow(struct cblock_store *s);       /* one more slab (0, or -1 on host OOM) */
/* Make sure n blocks can be taken without failing (0, or -1 on host OOM). */
static inline int cblock_store_reserve(struct cblock_store *s, int n) {
  return s->nfree >= (size_t)n ? 0 : cblock_store_grow(s);
}
/* A zeroed block; only after a successful reserve covering it. */
static inline struct cblock *cblock_take(struct cblock_store *s) {
  struct cblock *b = s->free_list;
  s->free_list = b->next;
  s->nfree--;
  *b = (struct cblock){.mapped = 1};
  return b;
}
static inline void cblock_put(struct cblock_store *s, struct cblock *b) {
  b->next = s->free_list;
  s->free_list = b;
  s->nfree++;
}

void cpool_init(struct cpool *p, int is_small);
/* At a strategy's create: the default stream's (0) record in both pools and the store's
 * first slab, made in setup rather than by the first allocations inside the timed replay
 * (a stream record without free blocks changes no decision). 0, or -1 on host OOM. */
int cpool_prepare(struct cblock_store *s, struct cpool *small, struct cpool *large);
void cpool_destroy(struct cpool *p);                 /* frees the stream records */
/* This stream's record; create = 1 makes it (NULL only on host OOM), else NULL if none.
 * Give every block its record (b->cs) before it first enters the pool. */
struct cstream *cpool_stream(struct cpool *p, uint64_t stream, int create);
/* insert_into_blocks: stamps gc_base with the pool's clock */
void cpool_insert(struct cpool *p, struct cblock *b);
void cpool_erase(struct cpool *p, struct cblock *b);
/* lower_bound of (stream, size, 0) when it falls in this stream: the smallest free block
 * of the stream with at least size bytes (lowest address among equals); else NULL */
struct cblock *cpool_lower_bound(struct cpool *p, uint64_t stream, uint64_t size);
/* within one stream: its largest free block, and the one before b */
struct cblock *cpool_stream_last(struct cpool *p, uint64_t stream);
struct cblock *cpool_prev_in_stream(const struct cblock *b);
/* all free blocks in (stream, size, address) order */
struct cblock *cpool_first(const struct cpool *p);
struct cblock *cpool_next(const struct cblock *b);
/* free blocks in the pool (its streams' counts added up: for the checks) */
size_t cpool_count(const struct cpool *p);
/* largest free block size in the pool (any stream), 0 if none; places the streams whose
 * free blocks changed since the last call first */
uint64_t cpool_largest(struct cpool *p);

/* get_free_block without the expandable twist: the best fit of this stream, if the
 * oversize rules allow it, taken out of the pool; NULL otherwise. The caller ticks the
 * GC clock (pool->get_free_calls) first when GC is on. */
struct cblock *caching_take_best_fit(const struct caching_config *c, struct cpool *p, uint64_t stream, uint64_t rounded);

/* alloc_found_block's split: b (not in a pool) keeps [addr+size, end) and goes back into
 * its pool as the remainder; a new block (from the store: reserve one first) takes
 * [addr, addr+size) and is returned. seg_head, when not NULL, is updated when the front
 * block becomes the segment's first block. */
struct cblock *cblock_split_front(struct cblock_store *s, struct cblock *b, uint64_t size, struct cblock **seg_head);

/* free_block's coalescing: merge b (free, not yet in a pool) with its free neighbours
 * (same segment, same mapped state), taking them out of the pool; returns the number of
 * neighbours merged. seg_head as above. */
int cblock_coalesce(struct cblock_store *s, struct cblock *b, struct cblock **seg_head);

/* free_block: cblock_coalesce, then cpool_insert into b's pool, in one call. */
void cblock_free_to_pool(struct cblock_store *s, struct cblock *b, struct cblock **seg_head);

#endif
