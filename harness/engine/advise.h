/* advise.h - `fragbench advise`: which PYTORCH_CUDA_ALLOC_CONF should this job use?
 * A search over PyTorch's own allocator settings (expandable_segments, max_split_size_mb,
 * max_non_split_rounding_mb, roundup_power2_divisions, garbage_collection_threshold).
 * The knobs' candidate values come from the trace's request sizes (advise_space.c); the
 * search is coordinate descent from PyTorch's defaults, with expandable segments off and
 * on (advise.c): vary one knob over its values, keep the best, repeat until a round
 * changes nothing.
 *
 * A job is never rerun with the same batches, so every candidate is replayed on every
 * variation of the job (variations.h: its iterations in other orders and resampled; the
 * recorded sequence is variation 0), the variations spread over all cores
 * (advise_eval.c), each under a cap = the budget when there is one (so
 * garbage_collection_threshold acts). The worst case over the variations decides: a
 * setting fits when it completes on all of them, and ranks by its worst-case overhead
 * (peak reserved over each variation's peak requested); the recommendation
 * (advise_rank.c) is the setting with the fewest knobs changed among those that fit
 * everywhere within ADVISE_TIE of the best worst case and never above PyTorch's default's
 * worst case; driver time decides only between settings
 * whose modeled driver time differs by more than ADVISE_DRIVER_MATTERS_NS per iteration.
 * The prediction assumes PyTorch's allocator is the one of the version modelled here
 * (the snapshot's), and that a rerun's iterations are drawn from those recorded. */
#ifndef FB_ADVISE_H
#define FB_ADVISE_H
#include <stddef.h>
#include <stdint.h>
#include "replay.h"
#include "variations.h"

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
  int fits;                      /* completed without an OOM on every variation (under the budget, if any) */
  struct run_result r;           /* the recorded sequence's replay (variation 0) */
  /* over the variations */
  int nvariations, fits_variations;   /* how many; on how many it completed (under the budget) */
  uint64_t worst_reserved;       /* the largest peak reserved of those that completed; when some did
                                    not, the smallest limit those need (advise_needs), if larger */
  int64_t headroom;              /* the budget (or the device) minus worst_reserved; negative: it does not fit */
  uint64_t min_events;           /* events replayed on the variation it got least far on */
  uint64_t mean_driver_ns;       /* modeled driver time, the mean over the variations */
  uint64_t need;                 /* the smallest limit it completes under on every variation (mincap; for
                                    one that does not fit, on those it failed); 0 = not searched */
  uint64_t need_min;             /* searched on every variation: the least of them (the spread: need_min..need) */
  double need_x_min, need_x_max; /* ... and as multiples of each variation's own peak requested (0 = n/a) */
  int worst_variation;           /* which variation gave worst_reserved (or failed first) */
  uint64_t failed_mask;          /* bit v: variation v did not complete (under the budget) */
  int tie;                       /* which tie it belongs to (advise_rank): rows of one tie show as one */
};

/* The ranking (advise_rank.c): < 0 when a is the better candidate. On more variations
 * completed (under the budget, if any) first; among those completing nowhere alike, the one
 * that got furthest; then the least worst case (worst_reserved), fewer knobs, the least
 * recorded-run peak reserved, the least mean driver time; ties end on the spec text. So a
 * setting no better on worst case, recorded run and knobs never ranks above one better on
 * one of them. advise_rank sorts res->c by it and makes ties: settings completing on the
 * same variations within ADVISE_TIE of the best worst case among them, the simplest first;
 * advise_pick then chooses and advise_run puts the pick first. */
#define ADVISE_TIE 0.02                       /* within 2% of the best worst case */
#define ADVISE_NEED_PRECISION 0.002           /* the smallest working limit to 0.2% (mincap's precision) */
#define ADVISE_PICK_POOL 3                    /* the best settings whose smallest working limit is searched */
#define ADVISE_DRIVER_MATTERS_NS 2000000ull   /* per iteration: ~1% of a 200 ms training step */
#define ADVISE_DRIVER_MATTERS_TRACE_NS 50000000ull   /* over the whole trace when it has no iterations */
int advise_compare(const struct advise_candidate *a, const struct advise_candidate *b, uint64_t budget);

struct advise_opts {
  const char *trace;
  int trace_device;              /* -1 = the first device with events */
  uint64_t budget;               /* 0 = minimise memory */
  struct device_config device;   /* the simulated device */
  int max_rounds;                /* coordinate descent rounds per start (0 = 6) */
  int progress;                  /* a line per round on stderr */
  int variations;                /* reruns replayed, the recorded one included (0 = VARIATIONS_DEFAULT, 1 = it alone) */
  uint64_t seed;                 /* the variations' seed (0 = 1) */
  int threads;                   /* replays at once (0 = the online cores) */
  int no_needs;                  /* skip the smallest-limit search over all variations (the pick then goes by worst_reserved) */
};

struct advise_result {
  struct advise_candidate *c;    /* every candidate replayed, ranked best first */
  int n, cap;
  uint64_t peak_requested;
  int rounds;                    /* descent rounds run, both starts */
  double elapsed_s;              /* the whole search */
  struct advise_space space;
  char recorded_allocator[32];   /* the snapshot's allocator, "" if it does not say */
  /* the variations */
  int nvariations, iterations, head_iters, tail_iters, threads;
  char variations_how[160];
  uint64_t headroom_of;          /* what headroom is measured against: the budget, else the device's usable bytes */
  uint64_t driver_matters_ns;    /* a driver-time difference below this is not weighed */
  int default_i;                 /* PyTorch's default's index after ranking (-1 = none) */
  int limited;                   /* replayed under a limit: the pick goes by the smallest working limit */
  int pick;                      /* the recommendation's index before it was put first; -1: none (nothing completes
                                    the recorded run under the limit) */
  int beyond;                    /* variations left out: their own peak requested is above the limit */
  uint64_t beyond_peak;          /* the largest such peak requested */
  int redrawn, stand_ins;        /* variations drawn again for asking more than the recorded run (variations.h) */
  int ends_in_oom;               /* the trace ends in PyTorch's OOM: a prefix of the job */
};

/* Runs the search. 0; or 2 (bad input, a budget below peak requested) / 1 (a device or
 * validator error) with err set. res is filled in either case; advise_free it. */
int advise_run(const struct advise_opts *o, struct advise_result *res, char *err);
void advise_free(struct advise_result *res);

/* advise_rank.c: the worst case a setting is ranked and shown by: its smallest working
 * limit over every variation where that was searched (under a limit), else worst_reserved */
uint64_t advise_worst(const struct advise_candidate *c);
/* Sorts res->c by advise_compare and sets each one's tie. */
void advise_rank(struct advise_result *res);
/* The recommendation among res->c (after advise_rank): the index of the first setting that
 * completes the recorded run (variation 0) under the limit - the simplest of the best tie -
 * or an equally simple member of its tie whose driver time is lower by more than
 * res->driver_matters_ns; -1 when no setting completes the recorded run. */
int advise_pick(const struct advise_result *res);

/* advise_eval.c: one setting replayed on every variation, in parallel; fills c's
 * aggregates (and c->r from variation 0). 0, or the worst exit class with err. */
struct variation_set;
int advise_eval(const struct run_spec *base, const struct variation_set *vs, int threads, uint64_t headroom_of,
                struct advise_candidate *c, char *err);
/* the same for nc settings at once, as one batch of settings x variations on the pool;
 * folded in order up to the first that failed (*done = how many were folded). */
int advise_eval_many(const struct run_spec *base, const struct variation_set *vs, int threads, uint64_t headroom_of,
                     struct advise_candidate *const *c, int nc, int *done, char *err);
/* the smallest limit c completes under (mincap on sim, exact for these settings) on the
 * variations it failed, or on all of them: need; for one that does not fit, worst_reserved
 * and headroom from it. 0, or the worst exit class with err. */
int advise_needs(const struct run_spec *base, const struct variation_set *vs, int threads, uint64_t headroom_of,
                 int all_variations, struct advise_candidate *c, char *err);
/* the same for nc settings at once (one batch); stops folding at the first that failed */
int advise_needs_many(const struct run_spec *base, const struct variation_set *vs, int threads, uint64_t headroom_of,
                      int all_variations, struct advise_candidate *const *c, int nc, char *err);

#endif
