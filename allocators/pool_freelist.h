/* pool_freelist.h - RMM's coalescing_free_list (include/rmm/mr/device/detail/
 * coalescing_free_list.hpp) for the `pool` strategy.
 *
 * Every block, free or handed out, is a record in the address-ordered chain of the
 * upstream (cudaMalloc'd) allocation it lies in; a chain starts at its head block, so
 * blocks of different upstream allocations are never neighbours and never merge (RMM's
 * is_head rule). A free block belongs to one stream's list, ordered by (size, address)
 * for best fit. Inserting a block into a list merges it with the chain neighbours that
 * are free in that same list: the same blocks RMM's address-ordered list would find
 * contiguous, without searching for them. */
#ifndef FB_POOL_FREELIST_H
#define FB_POOL_FREELIST_H
#include <stdint.h>
#include "ordset.h"

struct pool_freelist;

struct pool_block {
  struct ordnode by_size;           /* in owner's set while free */
  uint64_t addr, size;
  struct pool_block *prev, *next;   /* chain neighbours in the same upstream allocation */
  struct pool_freelist *owner;      /* the list it is free in; NULL while handed out */
  int is_head;                      /* starts its upstream allocation */
};

struct pool_blocks_slab;

/* Spare block records, shared by all lists of one pool. */
struct pool_spares {
  struct pool_block *free;          /* linked through `next` */
  struct pool_blocks_slab *slabs;
};

struct pool_freelist {
  struct ordset by_size;
  uint64_t free_bytes;
};

void pool_freelist_init(struct pool_freelist *l);
/* A new upstream allocation [addr, addr+size): one head block, handed out (not in a list). */
struct pool_block *pool_block_upstream(struct pool_spares *sp, uint64_t addr, uint64_t size);
/* Split a handed-out block: it keeps its first `size` bytes, the rest goes free into `l`
 * (it has no free neighbour there to merge with). 0, or -1 (no host memory). */
int pool_block_split(struct pool_block *b, uint64_t size, struct pool_freelist *l, struct pool_spares *sp);
/* Return a handed-out block to `l`, merging it with its free neighbours in `l`. */
void pool_freelist_insert(struct pool_freelist *l, struct pool_block *b, struct pool_spares *sp);
/* Best fit (coalescing_free_list::get_block: the smallest block >= size, lowest address
 * first among equal sizes), removed from the list and split as allocate_from_block does:
 * the block's first `size` bytes are handed out, the rest stays in this list.
 * The handed-out block, NULL if none fits, or NULL with *host_oom set. */
struct pool_block *pool_freelist_take(struct pool_freelist *l, uint64_t size, struct pool_spares *sp, int *host_oom);
/* Move every block of `from` into `to`, merging (free_list::insert(free_list&&)). */
void pool_freelist_merge(struct pool_freelist *to, struct pool_freelist *from, struct pool_spares *sp);
uint64_t pool_freelist_largest(const struct pool_freelist *l);
void pool_spares_destroy(struct pool_spares *sp);

#endif
