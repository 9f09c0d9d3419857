/* advise.h - `fragbench advise`: which PYTORCH_CUDA_ALLOC_CONF should this job use?
 * A search over PyTorch's own allocator settings (expandable_segments, max_split_size_mb,
 * max_non_split_rounding_mb, roundup_power2_divisions, garbage_collection_threshold),
 * every candidate one sim replay of the trace. The knobs' candidate values come from the
 * trace's request sizes (advise_space.c); the search is coordinate descent from PyTorch's
 * defaults, with expandable segments off and on (advise.c): vary one knob over its
 * values, keep the best, repeat until a round changes nothing.
 *
 * Without a budget the best candidate needs the least peak reserved memory; with one,
 * every candidate replays under a cap = budget (so garbage_collection_threshold acts),
 * and the best completes under it with the least modeled driver time. The prediction
 * assumes the job makes the same allocation sequence again, and that PyTorch's allocator
 * is the one of the version modelled here (the snapshot's). */
#ifndef FB_ADVISE_H
#define FB_ADVISE_H
#include <stddef.h>
#include <stdint.h>
#include "replay.h"

#define ADVISE_INTERVALS 16      /* roundup_power2_divisions intervals: 1 MiB .. 32 GiB */
#define ADVISE_MAX_VALUES 24

/* One point of the search: PyTorch's knobs. Zeroes are PyTorch's defaults (no
 * max_split_size, 20 MiB non-split rounding, plain 512 B rounding, no GC). */
struct advise_knobs {
  int expandable;
  uint64_t max_split_mb;                   /* 0 = none */
  uint64_t non_split_mb;                   /* 0 = default (20) */
  uint64_t roundup[ADVISE_INTERVALS];      /* all 0 = default */
  double gc;                               /* 0 = off */
};

/* The values each knob is tried with (each list holds the default first). */
struct advise_space {
  uint64_t split_mb[ADVISE_MAX_VALUES]; int nsplit;
  uint64_t non_split_mb[ADVISE_MAX_VALUES]; int nnon;
  uint64_t roundup[ADVISE_MAX_VALUES][ADVISE_INTERVALS]; int nroundup;
  double gc[ADVISE_MAX_VALUES]; int ngc;   /* only with a budget */
  /* roundup_power2_divisions one interval at a time: the intervals holding a good share
   * of the requests (their bytes or their count), each tried with 0, 2, 4, 8, 16 */
  int interval[ADVISE_INTERVALS]; int ninterval;
};

/* From the request sizes of the trace (any order), its peak requested and the budget
 * (0 = none): max_split_size_mb at the boundaries between size clusters and at size
 * quantiles of the large requests; max_non_split_rounding_mb from the spread of those
 * clusters; roundup_power2_divisions uniform 2..16, two-level lists split where the
 * request bytes and counts are halved, and per interval for the intervals that hold at
 * least 5% of the requests' bytes or count (at most 6); garbage_collection_threshold
 * between the peak requested's share of the budget and 1. */
void advise_space_from_sizes(const uint64_t *sizes, size_t n, uint64_t peak_requested, uint64_t budget,
                             struct advise_space *sp);

/* "expandable:max_split_size_mb=128,roundup_power2_divisions=[256:1,>:8]" ("caching" for
 * the defaults): a spec replay_run takes. */
void advise_knobs_spec(const struct advise_knobs *k, char *out, size_t n);
/* How many knobs differ from PyTorch's defaults (expandable_segments counts as one). */
int advise_knobs_count(const struct advise_knobs *k);

enum advise_origin { ADVISE_SEARCHED, ADVISE_RECORDED };

struct advise_candidate {
  struct advise_knobs k;
  char spec[700];
  enum advise_origin origin;     /* searched, or the snapshot's own setting (`recorded`) */
  int fits;                      /* completed without an OOM (under the budget, if any) */
  struct run_result r;
};

/* The ranking: < 0 when a is the better candidate. Without a budget: completed first,
 * then the least peak reserved, the least modeled driver time, fewer knobs. With one:
 * fits first, then the least driver time, the least peak reserved, fewer knobs; among
 * those that do not fit, the one that got furthest. Ties end on the spec text. The
 * recommendation is then the simplest setting (fewest knobs, shortest roundup list)
 * within ADVISE_DRIVER_TIE of the best's driver time, and of its peak reserved with a
 * budget (the same peak reserved without one); advise_run puts it first. */
#define ADVISE_DRIVER_TIE 0.02
int advise_compare(const struct advise_candidate *a, const struct advise_candidate *b, uint64_t budget);

struct advise_opts {
  const char *trace;
  int trace_device;              /* -1 = the first device with events */
  uint64_t budget;               /* 0 = minimise memory */
  struct device_config device;   /* the simulated device */
  int max_rounds;                /* coordinate descent rounds per start (0 = 6) */
  int progress;                  /* a line per round on stderr */
};

struct advise_result {
  struct advise_candidate *c;    /* every candidate replayed, ranked best first */
  int n, cap;
  uint64_t peak_requested;
  int rounds;                    /* descent rounds run, both starts */
  double elapsed_s;              /* the whole search */
  struct advise_space space;
  char recorded_allocator[32];   /* the snapshot's allocator, "" if it does not say */
};

/* Runs the search. 0; or 2 (bad input, a budget below peak requested) / 1 (a device or
 * validator error) with err set. res is filled in either case; advise_free it. */
int advise_run(const struct advise_opts *o, struct advise_result *res, char *err);
void advise_free(struct advise_result *res);

#endif
