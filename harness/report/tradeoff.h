/* tradeoff.h - memory against driver time, per strategy and workload: x = time in device
 * calls per 1000 alloc/free calls (modeled_driver_ns * 1000 / (allocs + frees)), y =
 * overhead (peak reserved / peak requested), from each uncapped row that completed. No
 * strategy is free: the ones that hold least memory call the driver most. */
#ifndef FB_TRADEOFF_H
#define FB_TRADEOFF_H
#include "run_folder.h"

/* 1 and the point of (w, s), or 0 when the row is missing, did not complete or made no call */
int tradeoff_point(const struct run_folder *f, int w, int s, double *driver_ns_per_1000, double *overhead);

#endif
