/* oracle.h - internal interface of the `oracle` reference row (allocators/oracle*.c): an
 * offline plan of every allocation's offset in one arena, made from the whole workload
 * before the replay (greedy by size over lifetime intervals). */
#ifndef FB_ORACLE_H
#define FB_ORACLE_H
#include <stdint.h>
#include "allocator.h"

#define ORACLE_ALIGN 512ull
#define ORACLE_NEVER UINT64_MAX   /* end of a block never freed: it lives to the end */

/* The k-th allocation the replay will make: its lifetime [start, end) in event indices,
 * its size rounded to 512 B, and the offset the plan gives it. */
struct oracle_plan {
  uint64_t n;                     /* allocations */
  uint64_t *start, *end, *size, *offset;
  uint64_t events;                /* events in the workload */
  uint64_t arena;                 /* bytes the plan needs: max(offset + size) */
  uint64_t peak_live;             /* max over time of the planned sizes live (a lower bound on arena) */
  /* placed blocks' ends in a max-segment tree over allocation order (= start order) */
  uint64_t *tree;
  uint64_t leaves;
  int best_gap;                   /* 0: lowest offset that fits; 1: the smallest gap that fits */
};

/* Read the workload to its end and record every allocation the replay will make (the
 * harness's skip rules: zero or huge sizes, an id already live, frees of unknown ids). */
int oracle_plan_record(struct oracle_plan *p, struct workload *w, char *err);
/* Greedy by size: largest first, each at the lowest (or best-fitting) offset where no
 * placed block of overlapping lifetime lies. Fills offset[] and arena. */
int oracle_plan_place(struct oracle_plan *p, char *err);
/* Placed blocks whose lifetime overlaps [t0, t1) among allocations [0, limit): their
 * indices into out (grown as needed), count returned; -1 on no memory. */
int64_t oracle_plan_overlapping(const struct oracle_plan *p, uint64_t t0, uint64_t t1, uint64_t limit, uint64_t **out, uint64_t *cap);
void oracle_plan_free(struct oracle_plan *p);

/* oracle_cache.c: the plans made in this process, by workload and gap rule.
 * oracle_plan_cached: p (empty, best_gap set) becomes the plan of w - a copy of the one
 * kept, or recorded and placed now and kept (*made = 1). 0, or -1 with err.
 * oracle_plan_ahead: the plan of w made and kept now unless one is (w read to its end).
 * oracle_cache_counts: plans made and plans taken from the kept ones, in this process.
 * oracle_cache_clear: every kept plan dropped. */
int oracle_plan_cached(struct oracle_plan *p, struct workload *w, int *made, char *err);
int oracle_plan_ahead(struct workload *w, int best_gap, char *err);
void oracle_cache_counts(uint64_t *made, uint64_t *taken);
void oracle_cache_clear(void);

#endif
