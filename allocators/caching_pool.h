/* caching_pool.h - the pool's hot operations, inline (see caching_policy.h for the
 * pool's design): the size bins, a stream's record, insert / erase / best fit / next,
 * splitting a block's front off, and the whole cache hit of each strategy
 * (cpool_alloc_hit, cpool_alloc_hit_expandable), so that caching.c's and expandable.c's
 * alloc run a cache hit as one function. caching_pool.c holds the rest and the extern
 * wrappers of caching_policy.h. Not for other strategies. */
#ifndef FB_CACHING_POOL_H
#define FB_CACHING_POOL_H
#include <stdint.h>
#include "caching_policy.h"
#include "caching_bin.h"

/* ---- size bins ---------------------------------------------------------------------
 * Sizes are multiples of 512: u = size / 512. u < 32 has a bin each; above, 32 bins per
 * power of two (the five bits under the leading one). Bins cover contiguous, increasing
 * size ranges, so bin order then (size, address) inside a bin is (size, address). */
#define BIN_SUB_BITS 5
#define BIN_SUB (1u << BIN_SUB_BITS)
#define NBINS (BIN_SUB + (55 - BIN_SUB_BITS) * BIN_SUB)
#define NWORDS ((NBINS + 63) / 64)

struct cstream {
  struct ordnode node;      /* in pool->streams */
  struct ordnode lnode;     /* in pool->largest while largest > 0 */
  uint64_t largest;         /* its largest free block's size (0: none) when last placed in pool->largest */
  struct cstream *next_stale;  /* pool->stale list, while stale */
  int stale;                /* its free blocks changed since it was placed: largest may be out of date */
  uint64_t stream;
  struct cpool *pool;
  size_t count;
  uint64_t nonempty[NWORDS];
  struct cbin bins[NBINS];
};

/* without a branch: fl is the leading bit of u, at least BIN_SUB_BITS (u < 2 * BIN_SUB
 * then keeps its own bin, u); u >> (fl - BIN_SUB_BITS) is BIN_SUB + the five bits under
 * the leading one */
static inline unsigned bin_of(uint64_t size) {
  uint64_t u = size >> 9;
  unsigned fl = 63u - (unsigned)__builtin_clzll(u | BIN_SUB);
  unsigned bin = ((fl - BIN_SUB_BITS) << BIN_SUB_BITS) + (unsigned)(u >> (fl - BIN_SUB_BITS));
  return bin < NBINS ? bin : NBINS - 1;
}

/* first non-empty bin >= i, or NBINS */
static inline unsigned bin_next(const struct cstream *cs, unsigned i) {
  if (i >= NBINS) return NBINS;
  unsigned w = i >> 6;
  uint64_t m = cs->nonempty[w] & (~0ull << (i & 63));
  while (!m) {
    if (++w == NWORDS) return NBINS;
    m = cs->nonempty[w];
  }
  return w * 64 + (unsigned)__builtin_ctzll(m);
}

/* last non-empty bin <= i, or NBINS */
static inline unsigned bin_prev(const struct cstream *cs, unsigned i) {
  unsigned w = i >> 6;
  uint64_t m = cs->nonempty[w] & (~0ull >> (63 - (i & 63)));
  while (!m) {
    if (w == 0) return NBINS;
    m = cs->nonempty[--w];
  }
  return w * 64 + 63u - (unsigned)__builtin_clzll(m);
}

static inline int stream_cmp(const struct ordnode *x, const struct ordnode *y) {
  uint64_t a = ORD_ENTRY(x, struct cstream, node)->stream, b = ORD_ENTRY(y, struct cstream, node)->stream;
  return a < b ? -1 : a > b;
}

static inline int largest_cmp(const struct ordnode *x, const struct ordnode *y) {
  const struct cstream *a = ORD_ENTRY(x, struct cstream, lnode), *b = ORD_ENTRY(y, struct cstream, lnode);
  if (a->largest != b->largest) return a->largest < b->largest ? -1 : 1;
  return a->stream < b->stream ? -1 : a->stream > b->stream;
}

ORDSET_TYPED(streams, stream_cmp)

static inline struct cstream *stream_entry(struct ordnode *n) { return n ? ORD_ENTRY(n, struct cstream, node) : NULL; }

/* pool->largest is brought up to date only when read (cpool_largest: a new reserved peak,
 * explain), not on every insert and erase: a stream whose free blocks changed goes on the
 * pool's stale list once, and cpool_largest re-places the streams on it. */
static inline void mark_stale(struct cpool *p, struct cstream *cs) {
  if (cs->stale) return;
  cs->stale = 1;
  cs->next_stale = p->stale;
  p->stale = cs;
}

/* insert_into_blocks and erase, inline (caching_pool.c's cpool_insert / cpool_erase wrap them) */
static inline __attribute__((always_inline)) void pool_insert(struct cpool *p, struct cblock *b) {
  struct cstream *cs = b->cs;
  unsigned i = bin_of(b->size);
  b->bin = (uint16_t)i;
  b->gc_base = p->get_free_calls;
  b->in_pool = 1;
  cbin_insert(&cs->bins[i], b);
  cs->nonempty[i >> 6] |= 1ull << (i & 63);
  cs->count++;
  p->free_bytes += b->size;
  mark_stale(p, cs);
}

static inline __attribute__((always_inline)) void pool_erase(struct cpool *p, struct cblock *b) {
  struct cstream *cs = b->cs;
  unsigned i = b->bin;
  cbin_erase(&cs->bins[i], b);
  if (!cbin_count(&cs->bins[i])) cs->nonempty[i >> 6] &= ~(1ull << (i & 63));
  b->in_pool = 0;
  cs->count--;
  p->free_bytes -= b->size;
  mark_stale(p, cs);
}

static inline struct cblock *bin_first(const struct cstream *cs, unsigned i) { return cbin_first(&cs->bins[i]); }
static inline struct cblock *bin_last(const struct cstream *cs, unsigned i) { return cbin_last(&cs->bins[i]); }

static inline __attribute__((always_inline)) struct cblock *pool_lower_bound(struct cpool *p, uint64_t stream, uint64_t size) {
  struct cstream *cs = p->last && p->last->stream == stream ? p->last : cpool_stream(p, stream, 0);
  if (!cs || !cs->count) return NULL;
  unsigned i = bin_of(size);
  if (cs->nonempty[i >> 6] & (1ull << (i & 63))) {
    struct cblock *b = cbin_lower_bound(&cs->bins[i], size);
    if (b) return b;
  }
  i = bin_next(cs, i + 1);
  return i < NBINS ? bin_first(cs, i) : NULL;
}

/* the first block of cs or of a later stream */
static inline struct cblock *first_from(const struct cstream *cs) {
  for (; cs; cs = stream_entry(ordset_next_inline(&cs->node))) {
    unsigned i = bin_next(cs, 0);
    if (i < NBINS) return bin_first(cs, i);
  }
  return NULL;
}

static inline __attribute__((always_inline)) struct cblock *pool_next(const struct cblock *b) {
  struct cblock *next = cbin_next(&b->cs->bins[b->bin], b);
  if (next) return next;
  unsigned i = bin_next(b->cs, b->bin + 1);   /* b is in the pool: its bin is stored */
  if (i < NBINS) return bin_first(b->cs, i);
  return first_from(stream_entry(ordset_next_inline(&b->cs->node)));
}

static inline __attribute__((always_inline)) struct cblock *take_best_fit(const struct caching_config *c, struct cpool *p,
                                                                          uint64_t stream, uint64_t rounded) {
  struct cblock *b = pool_lower_bound(p, stream, rounded);
  if (!b) return NULL;
  if (!caching_oversize_ok(c, rounded, b->size)) return NULL;
  pool_erase(p, b);
  return b;
}

/* cblock_take and the front's fields in one pass: every field written once (what
 * cblock_take's zeroing would leave is written as zero here) */
static inline __attribute__((always_inline)) struct cblock *split_front(struct cblock_store *s, struct cblock *b, uint64_t size,
                                                                        struct cblock **seg_head) {
  struct cblock *front = s->free_list;
  s->free_list = front->next;
  s->nfree--;
  front->node = (struct ordnode){0};
  front->addr = b->addr;
  front->size = size;
  front->stream = b->stream;
  front->requested = 0;
  front->gc_base = 0;
  front->pool = b->pool;
  front->cs = b->cs;
  front->seg = b->seg;
  front->allocated = 0;
  front->in_pool = 0;
  front->mapped = b->mapped;
  front->bin = 0;
  front->prev = b->prev;
  if (front->prev) front->prev->next = front;
  else if (seg_head) *seg_head = front;
  front->next = b;
  b->prev = front;
  b->addr += size;
  b->size -= size;
  pool_insert(b->pool, b);
  return front;
}

/* a free block found for a request: split when asked (the front is handed out, the rest
 * stays free in its pool), then hand it out; the split inlined */
static inline __attribute__((always_inline)) void cblock_hand_out(struct cblock_store *s, struct cblock *b, int split, uint64_t rounded,
                                                                                                                                   uint64_t orig_size, struct block *out) {
  if (split) b = split_front(s, b, rounded, cseg_head(b->seg));
  b->allocated = 1;
  b->requested = orig_size;
  out->addr = b->addr;
  out->size = b->size;
  out->stream = b->stream;
  out->handle = b;
}

/* get_free_block and alloc_found_block on a hit (the caching strategy), for a request of
 * orig_size bytes rounded to rounded (round_size; p the pool of that size): the best fit
 * with the oversize rules, taken out of the pool, split when should_split says so (pool
 * p's size class), handed out; a store block must be reserved first. 0 on a miss:
 * nothing changed. */
static inline __attribute__((always_inline)) int cpool_alloc_hit(struct cblock_store *s, const struct caching_config *c,
                                                                 struct cpool *p, uint64_t stream, uint64_t rounded,
                                                                 uint64_t orig_size, struct block *out) {
  struct cblock *b = take_best_fit(c, p, stream, rounded);
  if (!b) return 0;
  cblock_hand_out(s, b, caching_should_split(c, p->is_small, 0, b->size, rounded), rounded, orig_size, out);
  return 1;
}

/* How large a free block can become: itself plus the unmapped range after it. */
static inline uint64_t cblock_expandable_size(const struct cblock *b) {
  return b->size + (b->next && !b->next->mapped ? b->next->size : 0);
}

/* The same for expandable segments (expandable.c's get_free_block, then should_split for
 * expandable segments): from the best fit of this stream on to larger blocks of the
 * stream while their expandable size is smaller; the oversize rules. */
static inline __attribute__((always_inline)) int cpool_alloc_hit_expandable(struct cblock_store *s, const struct caching_config *c,
                                                                            struct cpool *p, uint64_t stream, uint64_t rounded,
                                                                            uint64_t orig_size, struct block *out) {
  struct cblock *b = pool_lower_bound(p, stream, rounded);
  if (!b) return 0;
  /* a block after b in the pool is at least as large as b, so it can win only while b is
   * followed by unmapped space (b's expandable size above its size): the walk stops there */
  while (b->next && !b->next->mapped) {
    struct cblock *n = pool_next(b);
    if (!n || n->stream != stream || cblock_expandable_size(n) >= cblock_expandable_size(b)) break;
    b = n;
  }
  if (!caching_oversize_ok(c, rounded, b->size)) return 0;
  pool_erase(p, b);
  cblock_hand_out(s, b, caching_should_split(c, p->is_small, 1, b->size, rounded), rounded, orig_size, out);
  return 1;
}

/* may try_merge_blocks(dst, src) merge? */
static inline int mergeable(const struct cblock *dst, const struct cblock *src) {
  return src && !src->allocated && src->in_pool && src->mapped == dst->mapped;
}

/* try_merge_blocks(dst, src) */
static inline __attribute__((always_inline)) int merge(struct cblock_store *s, struct cblock *dst, struct cblock *src,
                                                       struct cblock **seg_head) {
  if (!mergeable(dst, src)) return 0;
  if (dst->prev == src) {
    dst->addr = src->addr;
    dst->prev = src->prev;
    if (dst->prev) dst->prev->next = dst;
    else if (seg_head) *seg_head = dst;
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
  }
  dst->size += src->size;
  pool_erase(src->pool, src);
  cblock_put(s, src);
  return 1;
}

/* free_block: coalesce with the free neighbours, then insert_into_blocks (cblock_free_to_pool) */
static inline __attribute__((always_inline)) void cpool_free_block(struct cblock_store *s, struct cblock *b,
                                                                   struct cblock **seg_head) {
  struct cblock *prev = b->prev, *next = b->next;
  merge(s, b, prev, seg_head);
  merge(s, b, next, seg_head);
  pool_insert(b->pool, b);
}

#endif
