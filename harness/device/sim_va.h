/* sim_va.h - the simulated device's virtual address space: addresses handed out
 * downward from the top of the range (fresh), 2 MiB aligned; freed ranges (cudaFree,
 * cuMemAddressFree) are kept, coalesced, and handed out again once the fresh space is
 * used up, so a run lasts as long as its live volume fits the range, whatever its total
 * volume. Deterministic: the same calls give the same addresses. Until the fresh space
 * first runs out only the live pages are kept (a bitmap: a call costs little more than a
 * bump pointer); then the free ranges are built once from what is not live, and kept. */
#ifndef FB_SIM_VA_H
#define FB_SIM_VA_H
#include <stdint.h>
#include "ordset.h"

#define SIM_VA_PAGE (2ull << 20)   /* the granule: every take is rounded to a multiple of it */

struct sim_va {
  uint64_t fresh;             /* the lowest address handed out fresh so far */
  uint64_t top;               /* the range is [0, top) */
  int reusing;                /* 0: fresh space lasts, live pages in the bitmap (a few word
                                 operations a call); 1: it ran out once, free ranges in the sets */
  uint64_t *live;             /* while fresh: one bit per SIM_VA_PAGE of [0, top), set = live
                                 (mapped: only the pages of words the run touches take memory) */
  size_t live_len;            /* its mapped length */
  struct ordset by_addr;      /* free ranges by address (to coalesce neighbours) */
  struct ordset by_size;      /* the same ranges by (size, address): best fit */
  uint64_t free_bytes;        /* in free ranges */
};

void sim_va_init(struct sim_va *v, uint64_t top);
void sim_va_destroy(struct sim_va *v);
/* size rounded up to `align` (a multiple of SIM_VA_PAGE): fresh space while it lasts (the highest such address),
 * then the smallest freed range that fits (its top part; ties: the lowest range).
 * 0, or -1 when neither has room, or out of host memory (*oom = 1). */
int sim_va_take(struct sim_va *v, uint64_t size, uint64_t align, uint64_t *addr, int *oom);
/* a range taken before (same size) comes back; -1 out of host memory */
int sim_va_give(struct sim_va *v, uint64_t addr, uint64_t size, uint64_t align);

#endif
