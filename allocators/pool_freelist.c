/* pool_freelist.c - the `pool` strategy's blocks and per-stream coalescing free lists;
 * see pool_freelist.h. RMM keeps each list as a linked list and scans it; the chain and
 * one ordered set per list give the same choices in O(log n). */
#include <stdlib.h>
#include <string.h>
#include "pool_freelist.h"

#define POOL_SLAB_BLOCKS 512
struct pool_blocks_slab {
  struct pool_blocks_slab *next;
  struct pool_block blocks[POOL_SLAB_BLOCKS];
};

static inline int size_cmp(const struct ordnode *a, const struct ordnode *b) {
  const struct pool_block *x = ORD_ENTRY(a, struct pool_block, by_size);
  const struct pool_block *y = ORD_ENTRY(b, struct pool_block, by_size);
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}
ORDSET_TYPED(by_size, size_cmp)   /* by_size_insert, by_size_lower_bound: size_cmp inlined */

static struct pool_block *block_new(struct pool_spares *sp) {
  if (!sp->free) {
    struct pool_blocks_slab *s = malloc(sizeof *s);
    if (!s) return NULL;
    s->next = sp->slabs;
    sp->slabs = s;
    for (int i = 0; i < POOL_SLAB_BLOCKS; i++) {
      s->blocks[i].next = sp->free;
      sp->free = &s->blocks[i];
    }
  }
  struct pool_block *b = sp->free;
  sp->free = b->next;
  memset(b, 0, sizeof *b);
  return b;
}

static void block_release(struct pool_spares *sp, struct pool_block *b) {
  b->next = sp->free;
  sp->free = b;
}

static void list_add(struct pool_freelist *l, struct pool_block *b) {
  b->owner = l;
  by_size_insert(&l->by_size, &b->by_size);
  l->free_bytes += b->size;
}

static void list_remove(struct pool_freelist *l, struct pool_block *b) {
  ordset_erase_inline(&l->by_size, &b->by_size);
  l->free_bytes -= b->size;
  b->owner = NULL;
}

/* absorb b's chain successor n into b */
static void absorb_next(struct pool_block *b, struct pool_block *n, struct pool_spares *sp) {
  b->size += n->size;
  b->next = n->next;
  if (n->next) n->next->prev = b;
  block_release(sp, n);
}

void pool_freelist_init(struct pool_freelist *l) {
  ordset_init(&l->by_size, size_cmp);
  l->free_bytes = 0;
}

struct pool_block *pool_block_upstream(struct pool_spares *sp, uint64_t addr, uint64_t size) {
  struct pool_block *b = block_new(sp);
  if (!b) return NULL;
  b->addr = addr;
  b->size = size;
  b->is_head = 1;
  return b;
}

int pool_block_split(struct pool_block *b, uint64_t size, struct pool_freelist *l, struct pool_spares *sp) {
  struct pool_block *rest = block_new(sp);
  if (!rest) return -1;
  rest->addr = b->addr + size;
  rest->size = b->size - size;
  rest->prev = b;
  rest->next = b->next;
  if (b->next) b->next->prev = rest;
  b->next = rest;
  b->size = size;
  list_add(l, rest);
  return 0;
}

void pool_freelist_insert(struct pool_freelist *l, struct pool_block *b, struct pool_spares *sp) {
  if (b->next && b->next->owner == l) {
    list_remove(l, b->next);
    absorb_next(b, b->next, sp);
  }
  if (b->prev && b->prev->owner == l) {
    struct pool_block *p = b->prev;
    list_remove(l, p);
    absorb_next(p, b, sp);
    b = p;
  }
  list_add(l, b);
}

struct pool_block *pool_freelist_take(struct pool_freelist *l, uint64_t size, struct pool_spares *sp, int *host_oom) {
  struct pool_block key = {.addr = 0, .size = size};
  struct ordnode *n = by_size_lower_bound(&l->by_size, &key.by_size);
  *host_oom = 0;
  if (!n) return NULL;
  struct pool_block *b = ORD_ENTRY(n, struct pool_block, by_size);
  list_remove(l, b);
  if (b->size > size && pool_block_split(b, size, l, sp)) {
    list_add(l, b);
    *host_oom = 1;
    return NULL;
  }
  return b;
}

void pool_freelist_merge(struct pool_freelist *to, struct pool_freelist *from, struct pool_spares *sp) {
  struct ordnode *n;
  while ((n = ordset_first(&from->by_size))) {
    struct pool_block *b = ORD_ENTRY(n, struct pool_block, by_size);
    list_remove(from, b);
    pool_freelist_insert(to, b, sp);
  }
}

uint64_t pool_freelist_largest(const struct pool_freelist *l) {
  struct ordnode *n = ordset_last(&l->by_size);
  return n ? ORD_ENTRY(n, struct pool_block, by_size)->size : 0;
}

void pool_spares_destroy(struct pool_spares *sp) {
  while (sp->slabs) {
    struct pool_blocks_slab *s = sp->slabs;
    sp->slabs = s->next;
    free(s);
  }
  sp->free = NULL;
}
