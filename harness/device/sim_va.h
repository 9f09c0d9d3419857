/* sim_va.h - the simulated device's virtual address space: addresses handed out
 * downward from the top of the range (fresh), 2 MiB aligned; freed ranges (cudaFree,
 * cuMemAddressFree) are kept, coalesced, and handed out again once the fresh space is
 * used up, so a run lasts as long as its live volume fits the range, whatever its total
 * volume. Deterministic: the same calls give the same addresses. Until the fresh space
 * first runs out only the live ranges are kept (a hash table: a call costs what a bump
 * pointer does); then the free ranges are built once from what is not live, and kept. */
#ifndef FB_SIM_VA_H
#define FB_SIM_VA_H
#include <stdint.h>
#include "ordset.h"

struct sim_va {
  uint64_t fresh;             /* the lowest address handed out fresh so far */
  uint64_t top;               /* the range is [0, top) */
  int reusing;                /* 0: fresh space lasts, live ranges in a hash table (O(1) a call);
                                 1: it ran out once, free ranges in the two sets below */
  uint64_t *live_key;         /* while fresh: open addressing, key = address + 1 (0 = empty) */
  uint64_t *live_size;
  uint64_t live_cap, live_n;
  struct ordset by_addr;      /* free ranges by address (to coalesce neighbours) */
  struct ordset by_size;      /* the same ranges by (size, address): best fit */
  uint64_t free_bytes;        /* in free ranges */
};

void sim_va_init(struct sim_va *v, uint64_t top);
void sim_va_destroy(struct sim_va *v);
/* size rounded up to `align`: fresh space while it lasts (the highest such address),
 * then the smallest freed range that fits (its top part; ties: the lowest range).
 * 0, or -1 when neither has room, or out of host memory (*oom = 1). */
int sim_va_take(struct sim_va *v, uint64_t size, uint64_t align, uint64_t *addr, int *oom);
/* a range taken before (same size) comes back; -1 out of host memory */
int sim_va_give(struct sim_va *v, uint64_t addr, uint64_t size, uint64_t align);

#endif
