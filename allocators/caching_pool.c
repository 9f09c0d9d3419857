/* caching_pool.c - PyTorch's BlockPool and Block mechanics (see caching_policy.h): the
 * free-block set ordered by (stream, size, address), best fit with the oversize rules,
 * splitting a block's front off, coalescing free neighbours, and the Block free list. */
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
}

void cblock_store_destroy(struct cblock_store *s) {
  while (s->slabs) {
    struct cblock_slab *n = s->slabs->next;
    free(s->slabs);
    s->slabs = n;
  }
  s->free_list = NULL;
}

static int grow(struct cblock_store *s) {
  struct cblock_slab *sl = malloc(sizeof *sl);
  if (!sl) return -1;
  sl->next = s->slabs;
  s->slabs = sl;
  for (int i = SLAB_BLOCKS - 1; i >= 0; i--) {
    sl->blocks[i].next = s->free_list;
    s->free_list = &sl->blocks[i];
  }
  return 0;
}

int cblock_store_reserve(struct cblock_store *s, int n) {
  int have = 0;
  for (struct cblock *b = s->free_list; b && have < n; b = b->next) have++;
  return have >= n ? 0 : grow(s);
}

struct cblock *cblock_take(struct cblock_store *s) {
  struct cblock *b = s->free_list;
  s->free_list = b->next;
  memset(b, 0, sizeof *b);
  b->mapped = 1;
  return b;
}

void cblock_put(struct cblock_store *s, struct cblock *b) {
  b->next = s->free_list;
  s->free_list = b;
}

/* BlockComparatorSize: (stream, size, address) */
static int block_cmp(const struct ordnode *x, const struct ordnode *y) {
  const struct cblock *a = ORD_ENTRY(x, struct cblock, node), *b = ORD_ENTRY(y, struct cblock, node);
  if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
  if (a->size != b->size) return a->size < b->size ? -1 : 1;
  if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
  return 0;
}

void cpool_init(struct cpool *p, int is_small) {
  ordset_init(&p->free, block_cmp);
  p->free_bytes = 0;
  p->get_free_calls = 0;
  p->is_small = is_small;
}

void cpool_insert(struct cpool *p, struct cblock *b) {
  b->gc_base = p->get_free_calls;
  b->in_pool = 1;
  p->free_bytes += b->size;
  ordset_insert(&p->free, &b->node);
}

void cpool_erase(struct cpool *p, struct cblock *b) {
  ordset_erase(&p->free, &b->node);
  b->in_pool = 0;
  p->free_bytes -= b->size;
}

static struct cblock *entry(struct ordnode *n) { return n ? ORD_ENTRY(n, struct cblock, node) : NULL; }

struct cblock *cpool_lower_bound(const struct cpool *p, uint64_t stream, uint64_t size) {
  struct cblock key = {.stream = stream, .size = size, .addr = 0};
  return entry(ordset_lower_bound(&p->free, &key.node));
}

struct cblock *cpool_first(const struct cpool *p) { return entry(ordset_first(&p->free)); }
struct cblock *cpool_last(const struct cpool *p) { return entry(ordset_last(&p->free)); }
struct cblock *cpool_next(const struct cblock *b) { return entry(ordset_next(&b->node)); }
struct cblock *cpool_prev(const struct cblock *b) { return entry(ordset_prev(&b->node)); }

uint64_t cpool_largest(const struct cpool *p) {
  uint64_t largest = 0;
  struct cblock *b = cpool_last(p);
  while (b) {                              /* the last block of each stream, from the top */
    if (b->size > largest) largest = b->size;
    struct cblock key = {.stream = b->stream, .size = 0, .addr = 0};
    b = entry(ordset_floor(&p->free, &key.node));
  }
  return largest;
}

struct cblock *caching_take_best_fit(const struct caching_config *c, struct cpool *p, uint64_t stream, uint64_t rounded) {
  struct cblock *b = cpool_lower_bound(p, stream, rounded);
  if (!b || b->stream != stream) return NULL;
  if (!caching_oversize_ok(c, rounded, b->size)) return NULL;
  cpool_erase(p, b);
  return b;
}

struct cblock *cblock_split_front(struct cblock_store *s, struct cblock *b, uint64_t size, struct cblock **seg_head) {
  struct cblock *front = cblock_take(s);
  front->addr = b->addr;
  front->size = size;
  front->stream = b->stream;
  front->pool = b->pool;
  front->seg = b->seg;
  front->mapped = b->mapped;
  front->prev = b->prev;
  if (front->prev) front->prev->next = front;
  else if (seg_head) *seg_head = front;
  front->next = b;
  b->prev = front;
  b->addr += size;
  b->size -= size;
  cpool_insert(b->pool, b);
  return front;
}

/* try_merge_blocks(dst, src) */
static int merge(struct cblock_store *s, struct cblock *dst, struct cblock *src, struct cblock **seg_head) {
  if (!src || src->allocated || !src->in_pool || src->mapped != dst->mapped) return 0;
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
  cpool_erase(src->pool, src);
  cblock_put(s, src);
  return 1;
}

int cblock_coalesce(struct cblock_store *s, struct cblock *b, struct cblock **seg_head) {
  struct cblock *prev = b->prev, *next = b->next;
  return merge(s, b, prev, seg_head) + merge(s, b, next, seg_head);
}
