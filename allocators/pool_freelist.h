/* pool_freelist.h - RMM's coalescing_free_list (include/rmm/mr/device/detail/
 * coalescing_free_list.hpp) for the `pool` strategy: one stream's free blocks, ordered
 * by address (to coalesce on insert) and by (size, address) (for best fit). A block that
 * starts an upstream allocation (is_head) is never merged into the block before it. */
#ifndef FB_POOL_FREELIST_H
#define FB_POOL_FREELIST_H
#include <stdint.h>
#include "ordset.h"

struct pool_block {
  struct ordnode by_addr, by_size;
  uint64_t addr, size;
  int is_head;                    /* starts an upstream (cudaMalloc'd) allocation */
  struct pool_block *spare_next;  /* in the spare list while unused */
};

struct pool_blocks_slab;

/* Spare block records, shared by all lists of one pool. */
struct pool_spares {
  struct pool_block *free;
  struct pool_blocks_slab *slabs;
};

struct pool_freelist {
  struct ordset by_addr, by_size;
  uint64_t free_bytes;
};

void pool_freelist_init(struct pool_freelist *l);
/* Insert [addr, addr+size), merging with contiguous neighbours (unless the later one is a
 * head). 0, or -1 when no host memory is left for a record. */
int pool_freelist_insert(struct pool_freelist *l, struct pool_spares *sp, uint64_t addr, uint64_t size, int is_head);
/* Best fit (coalescing_free_list::get_block: the smallest block >= size, lowest address
 * first among equal sizes), split as pool_memory_resource::allocate_from_block does: its
 * first `size` bytes are handed out at *addr, the rest stays in this list (it cannot
 * merge with anything: its neighbours were already merged or are heads). 1 if found. */
int pool_freelist_take(struct pool_freelist *l, struct pool_spares *sp, uint64_t size, uint64_t *addr);
/* Move every block of `from` into `to`, coalescing (free_list::insert(free_list&&)). */
int pool_freelist_merge(struct pool_freelist *to, struct pool_freelist *from, struct pool_spares *sp);
uint64_t pool_freelist_largest(const struct pool_freelist *l);
void pool_freelist_clear(struct pool_freelist *l, struct pool_spares *sp);
void pool_spares_destroy(struct pool_spares *sp);

#endif
