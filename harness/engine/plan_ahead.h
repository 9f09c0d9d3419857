/* plan_ahead.h - work done ahead of a GPU's rows on a helper thread: each row's strategy
 * prepares what it makes from the workload alone (allocator_ops.prepare), in row order,
 * while the GPU replays earlier rows (plan_ahead.c). */
#ifndef FB_PLAN_AHEAD_H
#define FB_PLAN_AHEAD_H
#include <pthread.h>
#include <stdint.h>
#include "replay.h"

struct plan_ahead {
  pthread_t thread;
  int started;
  pthread_mutex_t mu;           /* guards stop */
  int stop;
  struct run_spec *specs;       /* the rows' specs, copied (their outputs cleared) */
  uint64_t *percent_base;       /* each row's device total: what its percentages are taken of */
  int n;
};

/* Start the helper on these rows, where some row's strategy has a prepare step: 1 started,
 * 0 nothing to do (or no thread to be had: the rows prepare for themselves). */
int plan_ahead_start(struct plan_ahead *a, const struct run_spec *specs, const uint64_t *percent_base, int n);
/* Stop it at its next row and wait for it; what it made stays kept. */
void plan_ahead_stop(struct plan_ahead *a);

#endif
