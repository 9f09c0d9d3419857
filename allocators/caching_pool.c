/* caching_pool.c - PyTorch's BlockPool and Block mechanics (see caching_policy.h): the
 * free-block set ordered by (stream, size, address), best fit with the oversize rules,
 * splitting a block's front off, coalescing free neighbours, and the Block free list.
 * The set is kept per stream in size bins of small ordsets (see struct cpool). */
#include <stdlib.h>
#include <string.h>
#include "caching_policy.h"

#define SLAB_BLOCKS 256

struct cblock_slab {
  struct cblock_slab *next;
  struct cblock blocks[SLAB_BLOCKS];
};

void cblock_store_init(struct cblock_store *s) {
  s->free_list = NULL;
  s->slabs = NULL;
  s->nfree = 0;
}

void cblock_store_destroy(struct cblock_store *s) {
  while (s->slabs) {
    struct cblock_slab *n = s->slabs->next;
    free(s->slabs);
    s->slabs = n;
  }
  s->free_list = NULL;
  s->nfree = 0;
}

int cblock_store_grow(struct cblock_store *s) {
  struct cblock_slab *sl = malloc(sizeof *sl);
  if (!sl) return -1;
  sl->next = s->slabs;
  s->slabs = sl;
  for (int i = SLAB_BLOCKS - 1; i >= 0; i--) {
    sl->blocks[i].next = s->free_list;
    s->free_list = &sl->blocks[i];
  }
  s->nfree += SLAB_BLOCKS;
  return 0;
}

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
  struct ordset bins[NBINS];
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
static unsigned bin_next(const struct cstream *cs, unsigned i) {
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
static unsigned bin_prev(const struct cstream *cs, unsigned i) {
  unsigned w = i >> 6;
  uint64_t m = cs->nonempty[w] & (~0ull >> (63 - (i & 63)));
  while (!m) {
    if (w == 0) return NBINS;
    m = cs->nonempty[--w];
  }
  return w * 64 + 63u - (unsigned)__builtin_clzll(m);
}

/* (size, address) inside a bin; the stream is the bin's */
static inline int block_cmp(const struct ordnode *x, const struct ordnode *y) {
  const struct cblock *a = ORD_ENTRY(x, struct cblock, node), *b = ORD_ENTRY(y, struct cblock, node);
  if (a->size != b->size) return a->size < b->size ? -1 : 1;
  if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
  return 0;
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

ORDSET_TYPED(bin, block_cmp)        /* bin_lower_bound: block_cmp inlined */

/* bin_insert with the node's treap priority taken from the block's address (Fibonacci
 * hashing: blocks in one pool never share an address) instead of the set's xorshift
 * stream: as random for the treap's balance, and deterministic on sim, for a few
 * instructions less per insert. The set's order, (size, address), is the same. */
static inline __attribute__((always_inline)) void bin_put(struct ordset *s, struct cblock *b) {
  struct ordnode *n = &b->node, *p = NULL, **link = &s->root;
  while (*link) {
    p = *link;
    link = block_cmp(n, p) < 0 ? &p->left : &p->right;
  }
  uint32_t x = (uint32_t)((b->addr * 0x9E3779B97F4A7C15ull) >> 32);
  n->prio = x;
  n->left = n->right = NULL;
  n->parent = p;
  *link = n;
  s->count++;
  if (p && p->prio > x) ordset_insert_rotations(s, n);
}
ORDSET_TYPED(streams, stream_cmp)

static struct cblock *entry(struct ordnode *n) { return n ? ORD_ENTRY(n, struct cblock, node) : NULL; }
static struct cstream *stream_entry(struct ordnode *n) { return n ? ORD_ENTRY(n, struct cstream, node) : NULL; }

void cpool_init(struct cpool *p, int is_small) {
  ordset_init(&p->streams, stream_cmp);
  ordset_init(&p->largest, largest_cmp);
  p->stale = NULL;
  p->last = NULL;
  p->count = 0;
  p->free_bytes = 0;
  p->get_free_calls = 0;
  p->is_small = is_small;
  p->owner = 0;
}

void cpool_destroy(struct cpool *p) {
  struct ordnode *n;
  while ((n = ordset_first_inline(&p->streams))) {
    ordset_erase_inline(&p->streams, n);
    free(stream_entry(n));
  }
  ordset_init(&p->largest, largest_cmp);
  p->stale = NULL;
  p->last = NULL;
}

struct cstream *cpool_stream(struct cpool *p, uint64_t stream, int create) {
  if (p->last && p->last->stream == stream) return p->last;
  struct cstream key = {.stream = stream};
  struct cstream *cs = stream_entry(streams_lower_bound(&p->streams, &key.node));
  if (!cs || cs->stream != stream) {
    if (!create) return NULL;
    cs = malloc(sizeof *cs);
    if (!cs) return NULL;
    memset(cs->nonempty, 0, sizeof cs->nonempty);
    for (unsigned i = 0; i < NBINS; i++) ordset_init(&cs->bins[i], block_cmp);
    cs->stream = stream;
    cs->pool = p;
    cs->count = 0;
    cs->largest = 0;
    cs->stale = 0;
    cs->next_stale = NULL;
    streams_insert(&p->streams, &cs->node);
  }
  p->last = cs;
  return cs;
}

static struct cblock *bin_last(const struct cstream *cs, unsigned i);

/* pool->largest is brought up to date only when read (cpool_largest: a new reserved peak,
 * explain), not on every insert and erase: a stream whose free blocks changed goes on the
 * pool's stale list once, and cpool_largest re-places the streams on it. */
static inline void mark_stale(struct cpool *p, struct cstream *cs) {
  if (cs->stale) return;
  cs->stale = 1;
  cs->next_stale = p->stale;
  p->stale = cs;
}

/* cs's place in pool->largest for its largest free block now (out when it has none) */
static void largest_update(struct cpool *p, struct cstream *cs) {
  if (cs->largest) ordset_erase_inline(&p->largest, &cs->lnode);
  unsigned i = cs->count ? bin_prev(cs, NBINS - 1) : NBINS;
  cs->largest = i < NBINS ? bin_last(cs, i)->size : 0;
  if (cs->largest) ordset_insert(&p->largest, &cs->lnode);
}

/* The hot operations are inline here (best fit, split, free_block call them); the
 * extern cpool_* functions wrap them for the strategies. */
static inline __attribute__((always_inline)) void pool_insert(struct cpool *p, struct cblock *b) {
  struct cstream *cs = b->cs;
  unsigned i = bin_of(b->size);
  b->bin = (uint16_t)i;
  b->gc_base = p->get_free_calls;
  b->in_pool = 1;
  bin_put(&cs->bins[i], b);
  cs->nonempty[i >> 6] |= 1ull << (i & 63);
  cs->count++;
  p->count++;
  p->free_bytes += b->size;
  mark_stale(p, cs);
}

static inline __attribute__((always_inline)) void pool_erase(struct cpool *p, struct cblock *b) {
  struct cstream *cs = b->cs;
  unsigned i = b->bin;
  ordset_erase_inline(&cs->bins[i], &b->node);
  if (!cs->bins[i].count) cs->nonempty[i >> 6] &= ~(1ull << (i & 63));
  b->in_pool = 0;
  cs->count--;
  p->count--;
  p->free_bytes -= b->size;
  mark_stale(p, cs);
}

void cpool_insert(struct cpool *p, struct cblock *b) { pool_insert(p, b); }
void cpool_erase(struct cpool *p, struct cblock *b) { pool_erase(p, b); }

static struct cblock *bin_first(const struct cstream *cs, unsigned i) { return entry(ordset_first_inline(&cs->bins[i])); }
static struct cblock *bin_last(const struct cstream *cs, unsigned i) { return entry(ordset_last_inline(&cs->bins[i])); }

static inline __attribute__((always_inline)) struct cblock *pool_lower_bound(struct cpool *p, uint64_t stream, uint64_t size) {
  struct cstream *cs = p->last && p->last->stream == stream ? p->last : cpool_stream(p, stream, 0);
  if (!cs || !cs->count) return NULL;
  unsigned i = bin_of(size);
  if (cs->nonempty[i >> 6] & (1ull << (i & 63))) {
    struct cblock key = {.size = size, .addr = 0};
    struct cblock *b = entry(bin_lower_bound(&cs->bins[i], &key.node));
    if (b) return b;
  }
  i = bin_next(cs, i + 1);
  return i < NBINS ? bin_first(cs, i) : NULL;
}

struct cblock *cpool_lower_bound(struct cpool *p, uint64_t stream, uint64_t size) { return pool_lower_bound(p, stream, size); }

struct cblock *cpool_stream_last(struct cpool *p, uint64_t stream) {
  struct cstream *cs = cpool_stream(p, stream, 0);
  if (!cs || !cs->count) return NULL;
  return bin_last(cs, bin_prev(cs, NBINS - 1));
}

struct cblock *cpool_prev_in_stream(const struct cblock *b) {
  struct cblock *prev = entry(ordset_prev_inline(&b->node));
  if (prev) return prev;
  unsigned i = bin_of(b->size);
  if (i == 0) return NULL;
  i = bin_prev(b->cs, i - 1);
  return i < NBINS ? bin_last(b->cs, i) : NULL;
}

/* the first block of cs or of a later stream */
static struct cblock *first_from(const struct cstream *cs) {
  for (; cs; cs = stream_entry(ordset_next_inline(&cs->node))) {
    unsigned i = bin_next(cs, 0);
    if (i < NBINS) return bin_first(cs, i);
  }
  return NULL;
}

struct cblock *cpool_first(const struct cpool *p) { return first_from(stream_entry(ordset_first_inline(&p->streams))); }

static inline __attribute__((always_inline)) struct cblock *pool_next(const struct cblock *b) {
  struct cblock *next = entry(ordset_next_inline(&b->node));
  if (next) return next;
  unsigned i = bin_next(b->cs, b->bin + 1);   /* b is in the pool: its bin is stored */
  if (i < NBINS) return bin_first(b->cs, i);
  return first_from(stream_entry(ordset_next_inline(&b->cs->node)));
}

struct cblock *cpool_next(const struct cblock *b) { return pool_next(b); }

uint64_t cpool_largest(struct cpool *p) {
  while (p->stale) {
    struct cstream *cs = p->stale;
    p->stale = cs->next_stale;
    cs->stale = 0;
    largest_update(p, cs);
  }
  struct ordnode *n = ordset_last_inline(&p->largest);
  return n ? ORD_ENTRY(n, struct cstream, lnode)->largest : 0;
}

static inline __attribute__((always_inline)) struct cblock *take_best_fit(const struct caching_config *c, struct cpool *p,
                                                                          uint64_t stream, uint64_t rounded) {
  struct cblock *b = pool_lower_bound(p, stream, rounded);
  if (!b) return NULL;
  if (!caching_oversize_ok(c, rounded, b->size)) return NULL;
  pool_erase(p, b);
  return b;
}

struct cblock *caching_take_best_fit(const struct caching_config *c, struct cpool *p, uint64_t stream, uint64_t rounded) {
  return take_best_fit(c, p, stream, rounded);
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

struct cblock *cblock_split_front(struct cblock_store *s, struct cblock *b, uint64_t size, struct cblock **seg_head) {
  return split_front(s, b, size, seg_head);
}

/* cblock_hand_out with the split inlined */
static inline __attribute__((always_inline)) void hand_out(struct cblock_store *s, struct cblock *b, int split, uint64_t rounded,
                                                           uint64_t orig_size, struct block *out) {
  if (split) b = split_front(s, b, rounded, cseg_head(b->seg));
  b->allocated = 1;
  b->requested = orig_size;
  out->addr = b->addr;
  out->size = b->size;
  out->stream = b->stream;
  out->handle = b;
}

int caching_alloc_cached(struct cblock_store *s, const struct caching_config *c, struct cpool *p, uint64_t stream,
                         uint64_t orig_size, struct block *out) {
  uint64_t rounded = caching_round_size_plain(orig_size);
  struct cblock *b = take_best_fit(c, p, stream, rounded);
  if (!b) return 0;
  hand_out(s, b, caching_should_split(c, p->is_small, 0, b->size, rounded), rounded, orig_size, out);
  return 1;
}

/* How large a free block can become: itself plus the unmapped range after it. */
static inline uint64_t expandable_size(const struct cblock *b) {
  return b->size + (b->next && !b->next->mapped ? b->next->size : 0);
}

int caching_alloc_expandable_cached(struct cblock_store *s, const struct caching_config *c, struct cpool *p, uint64_t stream,
                                    uint64_t orig_size, struct block *out) {
  uint64_t rounded = caching_round_size_plain(orig_size);
  struct cblock *b = pool_lower_bound(p, stream, rounded);
  if (!b) return 0;
  for (struct cblock *n = pool_next(b); n && n->stream == stream && expandable_size(n) < expandable_size(b); n = pool_next(n))
    b = n;
  if (!caching_oversize_ok(c, rounded, b->size)) return 0;
  pool_erase(p, b);
  hand_out(s, b, caching_should_split(c, p->is_small, 1, b->size, rounded), rounded, orig_size, out);
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

int cblock_coalesce(struct cblock_store *s, struct cblock *b, struct cblock **seg_head) {
  struct cblock *prev = b->prev, *next = b->next;
  return merge(s, b, prev, seg_head) + merge(s, b, next, seg_head);
}

void cblock_free_to_pool(struct cblock_store *s, struct cblock *b, struct cblock **seg_head) {
  struct cblock *prev = b->prev, *next = b->next;
  merge(s, b, prev, seg_head);
  merge(s, b, next, seg_head);
  pool_insert(b->pool, b);
}

void cblock_chain_report(const struct cblock *head, uint64_t seg_addr, uint64_t seg_size, int small_pool, int pool_live,
                         void (*fn)(void *ctx, const struct seg_block *b), void *ctx) {
  int split = head && head->next;
  uint32_t pool = head ? head->pool->owner : 0;
  for (const struct cblock *b = head; b; b = b->next) {
    struct seg_block sb = {.seg_addr = seg_addr, .seg_size = seg_size, .addr = b->addr, .size = b->size,
                           .requested = b->allocated ? b->requested : 0, .stream = b->stream, .small_pool = small_pool,
                           .pool = pool, .pool_live = pool && pool_live};
    sb.state = !b->mapped ? SEG_UNMAPPED : b->allocated ? SEG_ALLOCATED : split ? SEG_INACTIVE_SPLIT : SEG_FREE;
    fn(ctx, &sb);
  }
}
