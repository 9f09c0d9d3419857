/* model_bound.h - a strategy's model with two bounding behaviours on sim (async: whether
 * the driver has passed a free when it maps a chunk, which the trace does not record): the
 * harness replays the row once more with the other bound's parameters and widens the row's
 * model_err so that [peak_reserved x (1 - model_err), peak_reserved x (1 + model_err)]
 * covers both figures, each with the model's own residual error (allocator_ops.model_err). */
#ifndef FB_MODEL_BOUND_H
#define FB_MODEL_BOUND_H
#include "allocator.h"
#include "replay.h"

/* r: a finished sim row of ops (s its spec); sets r->model_err (unchanged where the
 * strategy has no bound, the row's own parameters already name it, or a figure is missing) */
void model_bound_widen(const struct run_spec *s, const struct allocator_ops *ops, struct run_result *r);

/* the step every caller that emits a row takes after replay_run (plan_row_run, fit, the
 * row mincap keeps): a finished sim row of s widened by its strategy's other bound. Not
 * inside replay_run: the engine's one replay knows no second one, and probes whose only
 * question is "does it complete" make none */
void model_bound_row(const struct run_spec *s, struct run_result *r);

/* the relative +/- around pt covering [lo x (1 - res), hi x (1 + res)]; exposed for the tests */
double model_bound_err(uint64_t pt, uint64_t lo, uint64_t hi, double res);

#endif
