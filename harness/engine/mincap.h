/* mincap.h - the smallest cap that completes: for one workload (or trace) x one
 * allocator, bisect the device cap between the workload's peak requested bytes (no
 * strategy can do with less) and a cap known to complete, to a relative precision; then
 * re-run a few steps above the found cap, because completion need not be monotonic in
 * the cap (a larger cap can keep a cached block that later pins a segment), and flag the
 * row when they disagree. Every probe is one replay_run(); on sim the answer is exact
 * and deterministic. */
#ifndef FB_MINCAP_H
#define FB_MINCAP_H
#include <stdint.h>
#include "replay.h"

#define MINCAP_PRECISION_DEFAULT 0.005

/* the steps above the found cap that must complete too: +1%, +2%, +5% */
#define MINCAP_NSTEPS 3
extern const double mincap_steps[MINCAP_NSTEPS];

struct mincap_report {
  int runs;                  /* replays made */
  int known;                 /* probes answered by a known run (struct mincap_known) instead */
  int same;                  /* probes answered by a run of this search that is theirs: every comparison
                                with the cap it made comes out the same under their cap (struct kept_run) */
  int floor;                 /* probes under the least the uncapped run's live blocks took at once:
                                runs out, not replayed */
  uint64_t peak_requested;   /* the lower bound */
  uint64_t lo;               /* largest cap seen failing (0: peak_requested itself completed) */
  uint64_t hi;               /* the mincap (0: none found) */
  uint64_t fails_above;      /* a cap above the mincap that failed; 0 = monotonic at the steps */
  int stopped;               /* 1: ended early, the caller's mincap_stop said hi was enough to know */
};

/* A caller that needs a search's answer only if it is above some bound it learns as it
 * goes (advise: a setting's largest need over its variations). enough(hi, ctx) is asked
 * after each completing probe; hi, the last cap that completed, is at least the answer
 * (the search's completing cap only comes down), and when enough says so the search ends
 * there, its out being that run at hi. */
struct mincap_stop {
  int (*enough)(uint64_t hi, void *ctx);
  void *ctx;
};

/* The spec of a probe: base under cap (0: none), stopping at its first OOM, with no
 * timeline and no progress line. */
struct run_spec mincap_probe_spec(const struct run_spec *base, uint64_t cap);

/* Runs the search for base (its cap_bytes, cap_x, on_oom and timeline are ignored: every
 * probe stops at the first OOM). `out` is the surviving run (the run at cap = mincap)
 * with mincap_bytes and mincap_x filled, or, when nothing completes, skipped or fails,
 * that run as it is (mincap_bytes = 0). A non-monotonic result keeps the found cap and
 * reads `ok: non-monotonic (fails at N bytes = +S%)`. progress: one line on stderr per
 * probe. Returns out->exit_class (0, 1 or 2). rep may be NULL. */
int mincap_find(const struct run_spec *base, double precision, int progress,
                struct run_result *out, struct mincap_report *rep);

/* Runs already made of the same input and strategy on the search's device, each standing
 * for the probe it equals, which is then not replayed: a completed uncapped run (its peak
 * requested and reserved are all step 1 reads) and caps under which a run ran out (a
 * failing probe's outcome is all the search reads of it; a completing probe is replayed,
 * its run being the row a search may keep). On sim such a run is the probe's replay,
 * event for event; on a GPU it is as good a sample of it as a fresh one. */
struct mincap_known {
  int uncapped;              /* 1: an uncapped run completed with these peaks */
  uint64_t peak_requested, peak_reserved;
  const struct run_result *row;   /* that run whole (NULL: its peaks alone); where blind, it is also the run
                                     under any cap at or above its peak reserved (uncapped_rows.h), not replayed */
  int blind;                 /* the strategy's run_result.blind_unreached */
  const uint64_t *ran_out;   /* caps (bytes) under which a run ran out */
  int nran_out;
};

/* mincap_find with known runs (NULL: none) */
int mincap_find_known(const struct run_spec *base, double precision, int progress, const struct mincap_known *known,
                      struct run_result *out, struct mincap_report *rep);

/* The same search without step 7 (the replays at +1%, +2%, +5% above the cap found): the
 * same mincap_bytes and surviving run as mincap_find, its status never "non-monotonic"
 * from above (a non-monotonic cap found below still is), and its model_err the run's own
 * (not widened by the strategy's other bound, model_bound.h). For callers that read the
 * cap only (advise's needs). stop (NULL: none) may end it early (struct mincap_stop). */
int mincap_need(const struct run_spec *base, double precision, const struct mincap_stop *stop, struct run_result *out,
                struct mincap_report *rep);

/* Confirm a found mincap on another device (the GPU, after a search on sim): a replay
 * at row->mincap_bytes there must complete with the same peak reserved as row, and a
 * replay one precision step below must end as it does on base's own device (on sim: it
 * fails, unless the row is non-monotonic there). uncapped (may be NULL): the same input
 * and strategy replayed uncapped on that device; where the strategy makes that run under
 * any cap it never reached (row->blind_unreached: uncapped_rows.h) and that run completed
 * reserving at most the mincap, it is the run at the mincap there, and only the replays
 * below are made; and one
 * step below the peak requested runs out without a replay (mincap_below_floor). Returns 1
 * confirmed, 0 a disagreement (described in msg), -1 an error in a replay (msg). runs:
 * replays made (may be NULL). */
int mincap_confirm(const struct run_spec *base, const struct device_config *on, const struct run_result *row,
                   const struct run_result *uncapped, double precision, char *msg, size_t len, int *runs);

/* Whether one precision step below row's mincap is under its peak requested: no run of
 * any strategy fits there (the live blocks alone hold more), on any device, so
 * mincap_confirm takes "runs out" there on both devices without replaying. */
int mincap_below_floor(const struct run_result *row, double precision);

/* Whether uncapped (a run on the confirming device, no cap) stands for row's run at its
 * mincap there: the strategy makes its uncapped run under a cap it never reached
 * (row->blind_unreached), and that run completed reserving at most it. */
int mincap_uncapped_stands(const struct run_result *row, const struct run_result *uncapped);

#endif
