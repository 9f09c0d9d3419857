/* uncapped_rows.h - an uncapped run's row standing for a capped run that never met its
 * cap. A strategy that learns of a cap only from refusals (allocator.h's cap_blind), or
 * whose own read of the cap cannot break at or above the run's peak requested
 * (ALLOC_CAP_READ_IN_USE: async), makes under a cap at or above what its uncapped run
 * reserved at most the same run, call for call: nothing is refused that the uncapped run
 * was granted. So where such a row is at hand (make bench's runs.csv, on the same device)
 * it is the capped run, not replayed: mincap's confirmations and searches, and `run`'s
 * capped rows (--uncapped FILE). On sim the replay would give the same row; on a GPU it
 * is as good a sample of that run as a fresh one. */
#ifndef FB_UNCAPPED_ROWS_H
#define FB_UNCAPPED_ROWS_H
#include <stdint.h>
#include "replay.h"
#include "results_read.h"

/* whether row i of t is of this input and strategy (workload label, allocator, params,
 * seed) on a device of this kind ("sim", "cuda": the device column's prefix) */
int results_same_input(const struct results *t, int i, const char *workload, const char *allocator, const char *params,
                       uint64_t seed, const char *kind);

/* the first row of t of this input and strategy on a device of this kind with no cap (and,
 * completed = 1, whose status is "ok" and that completed); -1: none */
int uncapped_row_find(const struct results *t, const char *workload, const char *allocator, const char *params, uint64_t seed,
                      const char *kind, int completed);

/* Row i of t read back (results_row.h) as the run it stands for before its strategy's
 * other bound widens it: model_err the strategy's own on sim (the row's was widened by its
 * uncapped bound; model_bound_row widens it again at the cap), 0 on a GPU. */
void uncapped_row_read(const struct results *t, int i, struct run_result *r);

/* whether u, an uncapped run, stands for the run of a strategy of that blindness
 * (run_result.blind_unreached) under cap: it completed, uncapped, reserving at most cap */
int uncapped_stands_at(const struct run_result *u, int blind, uint64_t cap);

/* The row of t that stands for s under cap (s's own input, strategy and seed, on s's
 * device kind), into *out with s's cap (cap_bytes, cap_x, cap_source, cap_lo, cap_hi):
 * 1; or 0 (none does: replay it). The caller widens it by the strategy's other bound at
 * the cap (model_bound_row), as after a replay. */
int uncapped_row_for(const struct results *t, const struct run_spec *s, uint64_t cap, struct run_result *out);

#endif
