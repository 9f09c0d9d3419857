/* pool_freelist.c - the `pool` strategy's per-stream coalescing free list; see
 * pool_freelist.h. RMM keeps a linked list and scans it; two ordered sets give the same
 * choices in O(log n). */
#include <stdlib.h>
#include <string.h>
#include "pool_freelist.h"

#define POOL_SLAB_BLOCKS 512
struct pool_blocks_slab {
  struct pool_blocks_slab *next;
  struct pool_block blocks[POOL_SLAB_BLOCKS];
};

static int addr_cmp(const struct ordnode *a, const struct ordnode *b) {
  uint64_t x = ORD_ENTRY(a, struct pool_block, by_addr)->addr, y = ORD_ENTRY(b, struct pool_block, by_addr)->addr;
  return x < y ? -1 : x > y;
}

static int size_cmp(const struct ordnode *a, const struct ordnode *b) {
  const struct pool_block *x = ORD_ENTRY(a, struct pool_block, by_size);
  const struct pool_block *y = ORD_ENTRY(b, struct pool_block, by_size);
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static struct pool_block *block_new(struct pool_spares *sp) {
  if (!sp->free) {
    struct pool_blocks_slab *s = malloc(sizeof *s);
    if (!s) return NULL;
    s->next = sp->slabs;
    sp->slabs = s;
    for (int i = 0; i < POOL_SLAB_BLOCKS; i++) {
      s->blocks[i].spare_next = sp->free;
      sp->free = &s->blocks[i];
    }
  }
  struct pool_block *b = sp->free;
  sp->free = b->spare_next;
  memset(b, 0, sizeof *b);
  return b;
}

static void block_release(struct pool_spares *sp, struct pool_block *b) {
  b->spare_next = sp->free;
  sp->free = b;
}

static void block_remove(struct pool_freelist *l, struct pool_block *b) {
  ordset_erase(&l->by_addr, &b->by_addr);
  ordset_erase(&l->by_size, &b->by_size);
  l->free_bytes -= b->size;
}

void pool_freelist_init(struct pool_freelist *l) {
  ordset_init(&l->by_addr, addr_cmp);
  ordset_init(&l->by_size, size_cmp);
  l->free_bytes = 0;
}

int pool_freelist_insert(struct pool_freelist *l, struct pool_spares *sp, uint64_t addr, uint64_t size, int is_head) {
  struct pool_block key = {.addr = addr};
  struct ordnode *n = ordset_lower_bound(&l->by_addr, &key.by_addr);
  struct pool_block *next = n ? ORD_ENTRY(n, struct pool_block, by_addr) : NULL;
  struct ordnode *pn = n ? ordset_prev(n) : ordset_last(&l->by_addr);
  struct pool_block *prev = pn ? ORD_ENTRY(pn, struct pool_block, by_addr) : NULL;
  int merge_prev = prev && prev->addr + prev->size == addr && !is_head;
  int merge_next = next && addr + size == next->addr && !next->is_head;
  l->free_bytes += size;
  if (merge_prev) {
    ordset_erase(&l->by_size, &prev->by_size);
    prev->size += size;
    if (merge_next) {
      prev->size += next->size;      /* next's bytes stay counted, now in prev */
      ordset_erase(&l->by_addr, &next->by_addr);
      ordset_erase(&l->by_size, &next->by_size);
      block_release(sp, next);
    }
    ordset_insert(&l->by_size, &prev->by_size);
    return 0;
  }
  if (merge_next) {
    /* the merged block starts at addr: its address order among the others is unchanged */
    ordset_erase(&l->by_size, &next->by_size);
    next->addr = addr;
    next->size += size;
    next->is_head = is_head;
    ordset_insert(&l->by_size, &next->by_size);
    return 0;
  }
  struct pool_block *b = block_new(sp);
  if (!b) {
    l->free_bytes -= size;
    return -1;
  }
  b->addr = addr;
  b->size = size;
  b->is_head = is_head;
  ordset_insert(&l->by_addr, &b->by_addr);
  ordset_insert(&l->by_size, &b->by_size);
  return 0;
}

int pool_freelist_take(struct pool_freelist *l, struct pool_spares *sp, uint64_t size, uint64_t *addr) {
  struct pool_block key = {.addr = 0, .size = size};
  struct ordnode *n = ordset_lower_bound(&l->by_size, &key.by_size);
  if (!n) return 0;
  struct pool_block *b = ORD_ENTRY(n, struct pool_block, by_size);
  *addr = b->addr;
  if (b->size == size) {
    block_remove(l, b);
    block_release(sp, b);
    return 1;
  }
  /* the remainder keeps the block's place in address order */
  ordset_erase(&l->by_size, &b->by_size);
  b->addr += size;
  b->size -= size;
  b->is_head = 0;
  ordset_insert(&l->by_size, &b->by_size);
  l->free_bytes -= size;
  return 1;
}

int pool_freelist_merge(struct pool_freelist *to, struct pool_freelist *from, struct pool_spares *sp) {
  struct ordnode *n;
  while ((n = ordset_first(&from->by_addr))) {
    struct pool_block *b = ORD_ENTRY(n, struct pool_block, by_addr);
    uint64_t addr = b->addr, size = b->size;
    int head = b->is_head;
    block_remove(from, b);
    block_release(sp, b);
    if (pool_freelist_insert(to, sp, addr, size, head)) return -1;
  }
  return 0;
}

uint64_t pool_freelist_largest(const struct pool_freelist *l) {
  struct ordnode *n = ordset_last(&l->by_size);
  return n ? ORD_ENTRY(n, struct pool_block, by_size)->size : 0;
}

void pool_freelist_clear(struct pool_freelist *l, struct pool_spares *sp) {
  struct ordnode *n;
  while ((n = ordset_first(&l->by_addr))) {
    struct pool_block *b = ORD_ENTRY(n, struct pool_block, by_addr);
    block_remove(l, b);
    block_release(sp, b);
  }
}

void pool_spares_destroy(struct pool_spares *sp) {
  while (sp->slabs) {
    struct pool_blocks_slab *s = sp->slabs;
    sp->slabs = s->next;
    free(s);
  }
  sp->free = NULL;
}
