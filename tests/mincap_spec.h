/* mincap_spec.h - what the mincap tests (test_mincap.c, test_mincap_answers.c) share: a
 * row's spec on sim, whether a strategy is registered, and the script workload both take
 * by hand. */
#ifndef FB_TEST_MINCAP_SPEC_H
#define FB_TEST_MINCAP_SPEC_H
#include "row_spec.h"

#define MiB (1ull << 20)

/* row_spec, checked by the validator as it runs */
static inline void base_spec(struct run_spec *s, const char *workload, const char *allocator) {
  row_spec(s, workload, allocator);
  s->validate = 1;
}

static inline int registered(const char *name) { return allocator_find(name) != NULL; }

/* a1=3MiB/a2=3MiB/f1/a3=5MiB/f2/f3
 *   live requested: 3, 6, 3, 8, 5, 0 MiB -> peak_requested = 8 MiB.
 *   raw: one cudaMalloc of the requested size each, so reserved = live requested:
 *        mincap = 8 MiB = 8388608 bytes, mincap_x = 1.
 *   caching: 3 MiB and 5 MiB are > 1 MiB (large pool) and < 10 MiB, so the first request
 *        takes one 20 MiB segment and splits it (remainder 17 MiB > 1 MiB); a2 splits the
 *        17 MiB block, a3 the 14 MiB one. Under any cap below 20 MiB the first segment
 *        cannot be had and there is nothing to release: mincap = 20 MiB = 20971520 bytes,
 *        mincap_x = 20 / 8 = 2.5. */
#define SCRIPT_SMALL "script:events=a1=3MiB/a2=3MiB/f1/a3=5MiB/f2/f3"

#endif
