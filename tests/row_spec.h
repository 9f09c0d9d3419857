/* row_spec.h - a row's spec as the engine tests build it: a workload (generator spec or
 * script) under one strategy on the simulated device, seed 1, quiet (test_fit.c, and the
 * mincap tests through mincap_spec.h). */
#ifndef FB_TEST_ROW_SPEC_H
#define FB_TEST_ROW_SPEC_H
#include <string.h>
#include "replay.h"

static inline void row_spec(struct run_spec *s, const char *workload, const char *allocator) {
  memset(s, 0, sizeof *s);
  s->workload = workload;
  s->trace_device = -1;
  s->world = 1;
  s->seed = 1;
  s->allocator = allocator;
  s->device.kind = "sim";
  s->quiet = 1;
}

#endif
