/* mincap.c - the smallest cap that completes; see mincap.h.
 *
 * The search, for one source x allocator:
 *   1. an uncapped run: its peak reserved R is a cap known to complete (a run capped at
 *      R makes the same device calls with the same outcomes), its peak requested P the
 *      lower bound. A run that does not fit the device uncapped ends the search (oom).
 *   2. cap = P: the floor; if it completes, the mincap is P exactly.
 *   3. cap = R, or the device's usable memory where R does not complete (strategies that
 *      read the cap, e.g. bfc's memory_limit, may behave differently under one).
 *   4. bisection until (hi - lo) <= precision * hi, lo failing and hi completing.
 *   5. the survivor's own peak reserved, when below hi, is tried as the cap: on sim the
 *      run repeats exactly, which makes the answer exact rather than within precision.
 *   6. completion need not be monotonic: caps on a grid below the last failing cap
 *      (P x 1.01, 1.02, 1.03, 1.05, 1.07, 1.1, 1.15, 1.2, 1.3, 1.5, 1.75, 2, 3) are tried
 *      too; the first that completes becomes hi, bisection runs again below it, and the
 *      row is flagged (a larger cap, the old lo, fails).
 *   7. hi * (1 + step) for each step must complete too; else the row is flagged.
 * A probe that equals a known run (mincap_find_known: the uncapped run, caps under which
 * one ran out, and, the uncapped row whole at hand, a cap at or above what it reserved for
 * a strategy that makes it under any cap it never reached: uncapped_rows.h) is answered by
 * it instead of a replay; so is a probe, for a strategy that
 * reads the cap only by comparing demands with it (cap-blind, allocator.h, or
 * ALLOC_CAP_COMPARED), under a cap every comparison of a run this search made comes out the
 * same under: it is that run, call for call, completing or running out (struct
 * kept_run). Steps 3 and 5 are mostly answered so, and some steps of 4 and 6.
 * And a probe under the most the uncapped run's live blocks took at least at once (each
 * block its request rounded as the strategy rounds, allocator_ops.least_block: blocks lie
 * apart in what is reserved) runs out whatever the strategy decides: it is not replayed
 * either (the floor of step 2, and bisection steps under it).
 * mincap_need is steps 1-6 alone: the same cap, without the check above it (the three
 * replays of step 7 are a third of a search's completing replays; advise reads the cap
 * only), nor the second replay of model_bound.h; a caller may end it early where the cap
 * it would find, at most the last that completed, is no use to it (struct mincap_stop). */
#include "status.h"
#include "mincap.h"
#include "model_bound.h"
#include "uncapped_rows.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double mincap_steps[MINCAP_NSTEPS] = {0.01, 0.02, 0.05};
static const double below_grid[] = {1.01, 1.02, 1.03, 1.05, 1.07, 1.1, 1.15, 1.2, 1.3, 1.5, 1.75, 2.0, 3.0};
#define NGRID (int)(sizeof below_grid / sizeof below_grid[0])

static int completes(const struct run_result *r) {
  return r->exit_class == 0 && r->completed && status_is(r->status, "ok");
}

/* one replay of base at cap on device dev (NULL: base's own) */
struct run_spec mincap_probe_spec(const struct run_spec *base, uint64_t cap) {
  struct run_spec s = *base;
  s.cap_bytes = cap;
  s.cap_x = 0;
  s.on_oom = ON_OOM_STOP;
  s.timeline = NULL;
  s.progress = 0;
  return s;
}

/* least: track the most the live blocks take at least at once (the uncapped probe: the
 * search's floor) */
static void replay_at(const struct run_spec *base, const struct device_config *dev, uint64_t cap, int least, struct run_result *r) {
  struct run_spec s = mincap_probe_spec(base, cap);
  if (dev) s.device = *dev;
  s.least_floor = least;
  run_result_init(r);
  replay_run(&s, r);
}

static void probe(const struct run_spec *base, uint64_t cap, int progress, struct mincap_report *rep,
                  struct run_result *r) {
  replay_at(base, NULL, cap, cap == 0, r);
  rep->runs++;
  if (progress) {
    char b[32];
    fprintf(stderr, "mincap: %s x %s: probe %d: cap %s: %s\n", r->workload[0] ? r->workload : "?",
            r->allocator[0] ? r->allocator : base->allocator, rep->runs, cap ? fmt_bytes(cap, b, sizeof b) : "none",
            completes(r) ? "completes" : r->status);
  }
}

/* the device's usable memory (what an uncapped run could take at most) */
static uint64_t device_usable(const struct run_spec *base) {
  struct device d;
  char err[FB_ERRLEN];
  if (device_open(&d, &base->device, err)) return 0;
  uint64_t u = d.usable ? d.usable : d.total;
  device_close(&d);
  return u;
}

/* A run, completed or ran out, of a strategy that reads the cap only by comparing demands
 * with it (a cap-blind one through the device alone; ALLOC_CAP_COMPARED), and the caps
 * [lo, hi] under which each of its comparisons comes out the same (run_result.same_lo,
 * same_hi: from the largest demand granted to the smallest refused less a byte): under any
 * of them the run is the same, call for call, to its end or to the same refusal it ran out
 * at, so a probe there is answered by it, not replayed. */
struct kept_run {
  uint64_t lo, hi;
  struct run_result r;
};

/* Search state: the best (completing) run so far and a scratch run, swapped on success. */
struct search {
  const struct run_spec *base;
  const struct mincap_known *known;
  int progress;
  struct mincap_report *rep;
  struct run_result runs[2];
  int best;                 /* index of the run at cap = rep->hi; -1 none yet */
  struct kept_run *kept;   /* the runs so far that know the caps they are the same under */
  int nkept, kept_cap;
  uint64_t floor;           /* every run runs out under a cap below it: the most the live blocks
                               took at least at once in the uncapped run (its peak_least) */
  const struct mincap_stop *stop;   /* NULL, or when the caller has no more use for the search */
};

/* whether the caller has no use for the rest of the search: its answer will be at most
 * the cap that completed last (rep->hi only comes down), and the caller says that is
 * enough to know */
static int stopped(const struct search *S) {
  if (!S->stop || !S->rep->hi || !S->stop->enough(S->rep->hi, S->stop->ctx)) return 0;
  S->rep->stopped = 1;
  return 1;
}

/* keep r where the caps it is the same under are known and it completed or ran out; out of
 * memory it is simply not kept */
static void keep_run(struct search *S, const struct run_result *r) {
  if (!r->same_lo || r->same_hi < r->same_lo) return;
  if (!(completes(r) || (r->exit_class == 0 && status_is(r->status, "oom") && r->first_oom_event >= 0))) return;
  if (S->nkept == S->kept_cap) {
    int n = S->kept_cap ? 2 * S->kept_cap : 8;
    struct kept_run *more = realloc(S->kept, (size_t)n * sizeof *more);
    if (!more) return;
    S->kept = more;
    S->kept_cap = n;
  }
  S->kept[S->nkept++] = (struct kept_run){.lo = r->same_lo, .hi = r->same_hi, .r = *r};
}

/* the kept run that stands for a probe under cap, or NULL */
static const struct run_result *kept_answer(const struct search *S, uint64_t cap) {
  for (int i = 0; i < S->nkept; i++)
    if (cap >= S->kept[i].lo && cap <= S->kept[i].hi) return &S->kept[i].r;
  return NULL;
}

/* whether a known run ran out under exactly this cap */
static int known_ran_out(const struct search *S, uint64_t cap) {
  for (int i = 0; S->known && i < S->known->nran_out; i++)
    if (S->known->ran_out[i] == cap) return 1;
  return 0;
}

/* a run under cap that runs out whatever the strategy decides, taken so without a replay
 * (a failing run: nothing else of it is read) */
static void runs_out_unreplayed(uint64_t cap, struct run_result *r) {
  run_result_init(r);
  snprintf(r->status, sizeof r->status, "oom");
  r->cap_bytes = cap;
}

/* a probe a known run answers: it ran out under cap (r: a failing run, nothing else read) */
static void probe_known(const struct search *S, uint64_t cap, struct run_result *r) {
  runs_out_unreplayed(cap, r);
  S->rep->known++;
  if (S->progress) {
    char b[32];
    fprintf(stderr, "mincap: %s: probe: cap %s: oom (a known run)\n", S->base->allocator, fmt_bytes(cap, b, sizeof b));
  }
}

/* whether the known uncapped run stands for the run under cap (uncapped_rows.h): it
 * completes there, the same run */
static int uncapped_answers(const struct search *S, uint64_t cap) {
  return S->known && S->known->row && uncapped_stands_at(S->known->row, S->known->blind, cap);
}

/* a probe the known uncapped run answers: that run, under cap */
static void probe_by_uncapped(const struct search *S, uint64_t cap, struct run_result *r) {
  *r = *S->known->row;
  r->cap_bytes = cap;
  r->cap_x = 0;
  S->rep->known++;
  if (S->progress) {
    char b[32];
    fprintf(stderr, "mincap: %s: probe: cap %s: completes (its uncapped run, which never met the cap)\n", S->base->allocator,
            fmt_bytes(cap, b, sizeof b));
  }
}

/* a probe under the floor */
static void probe_below_floor(struct search *S, uint64_t cap, struct run_result *r) {
  runs_out_unreplayed(cap, r);
  S->rep->floor++;
  if (S->progress) {
    char b[32], c[32];
    fprintf(stderr, "mincap: %s: probe: cap %s: oom (under %s, the least its live blocks took at once)\n", S->base->allocator,
            fmt_bytes(cap, b, sizeof b), fmt_bytes(S->floor, c, sizeof c));
  }
}

/* Probe cap; on completion it becomes the best. 1 completes, 0 fails, -1 error (in scratch). */
static int try_cap(struct search *S, uint64_t cap, struct run_result **scratch_out) {
  int k = S->best == 0 ? 1 : 0;
  if (known_ran_out(S, cap)) {
    probe_known(S, cap, &S->runs[k]);
    *scratch_out = &S->runs[k];
    return 0;
  }
  if (cap < S->floor) {
    probe_below_floor(S, cap, &S->runs[k]);
    *scratch_out = &S->runs[k];
    return 0;
  }
  *scratch_out = &S->runs[k];
  const struct run_result *same;
  if (uncapped_answers(S, cap)) {
    probe_by_uncapped(S, cap, &S->runs[k]);
  } else if ((same = kept_answer(S, cap))) {   /* the run under this cap, without replaying it */
    S->runs[k] = *same;
    S->runs[k].cap_bytes = cap;
    S->rep->same++;
    if (S->progress) {
      char b[32];
      fprintf(stderr, "mincap: %s: probe: cap %s: %s (a run of this search: its comparisons with the cap agree under this one)\n",
              S->base->allocator, fmt_bytes(cap, b, sizeof b), completes(same) ? "completes" : same->status);
    }
  } else {
    probe(S->base, cap, S->progress, S->rep, &S->runs[k]);
    if (S->runs[k].exit_class) return -1;
    keep_run(S, &S->runs[k]);
  }
  if (!completes(&S->runs[k])) return 0;
  S->best = k;
  S->rep->hi = cap;
  return 1;
}

/* Bisect between *lo (fails) and S->rep->hi (completes) to the precision, then try the
 * survivor's own peak reserved as the cap. 0, or -1 on an error (in *scratch). */
static int bisect(struct search *S, double precision, uint64_t *lo, struct run_result **scratch) {
  struct mincap_report *rep = S->rep;
  while ((double)(rep->hi - *lo) > precision * (double)rep->hi && rep->hi - *lo > 1) {
    if (stopped(S)) return 0;
    uint64_t mid = *lo + (rep->hi - *lo) / 2;
    int rc = try_cap(S, mid, scratch);
    if (rc < 0) return -1;
    if (!rc) *lo = mid;
  }
  uint64_t pr = S->runs[S->best].peak_reserved;
  if (stopped(S)) return 0;
  if (pr > *lo && pr < rep->hi && try_cap(S, pr, scratch) < 0) return -1;
  return 0;
}

static int finish_with(struct run_result *out, const struct run_result *r) {
  *out = *r;
  return out->exit_class;
}

/* steps 1-6; for_row (mincap_find: out is a row of its CSV): step 7 and the row's second
 * bound too (model_bound.h), which a need (mincap_need: the cap alone read) goes without */
static int search(const struct run_spec *base, double precision, int progress, int for_row, const struct mincap_known *known,
                  const struct mincap_stop *stop, struct run_result *out, struct mincap_report *rep_out) {
  struct mincap_report rep_local;
  struct mincap_report *rep = rep_out ? rep_out : &rep_local;
  memset(rep, 0, sizeof *rep);
  if (!(precision > 0 && precision < 1)) precision = MINCAP_PRECISION_DEFAULT;
  struct search *S = calloc(1, sizeof *S);
  if (!S) {
    run_result_init(out);
    snprintf(out->status, sizeof out->status, "error: out of host memory");
    out->exit_class = 1;
    return 1;
  }
  S->base = base;
  S->known = known;
  S->progress = progress;
  S->rep = rep;
  S->best = -1;
  S->stop = stop;
  struct run_result *scratch;
  int rc;

  /* 1. uncapped (a known completed run: its peaks; one that allocated nothing is replayed,
   * its run being the row then) */
  struct run_result *r0 = &S->runs[0];
  uint64_t P, R;
  if (known && known->uncapped && known->peak_requested) {
    P = known->peak_requested;
    R = known->peak_reserved;
    rep->known++;
  } else {
    probe(base, 0, progress, rep, r0);
    if (r0->exit_class || !completes(r0)) { rc = finish_with(out, r0); goto done; }   /* error, skipped, or oom on the whole device */
    keep_run(S, r0);
    S->floor = r0->peak_least;
    P = r0->peak_requested;
    R = r0->peak_reserved;
  }
  rep->peak_requested = P;
  if (!P) { rc = finish_with(out, r0); goto done; }   /* nothing allocated: no cap applies */

  /* 2. the floor */
  rc = try_cap(S, P, &scratch);
  if (rc < 0) { rc = finish_with(out, scratch); goto done; }
  uint64_t lo = rc ? 0 : P;
  if (!rc) {
    /* 3. a completing cap to bisect from */
    rc = R > P ? try_cap(S, R, &scratch) : 0;
    if (rc < 0) { rc = finish_with(out, scratch); goto done; }
    if (!rc) {
      uint64_t U = device_usable(base);
      rc = U > P && U != R ? try_cap(S, U, &scratch) : 0;
      if (rc < 0) { rc = finish_with(out, scratch); goto done; }
      if (!rc) { rc = finish_with(out, scratch); goto done; }   /* nothing capped completes: the failing run, no mincap */
    }
    /* 4. bisection, 5. the survivor's own peak */
    if (bisect(S, precision, &lo, &scratch) < 0) { rc = finish_with(out, scratch); goto done; }
    /* 6. a completing cap below the last failing one? (non-monotonic completion) */
    uint64_t floor_fail = P;   /* the largest grid cap known to fail below lo */
    for (int g = 0; g < NGRID && !stopped(S); g++) {
      uint64_t cap = (uint64_t)ceil((double)P * below_grid[g]);
      if (cap >= lo) break;
      if (cap <= floor_fail) continue;
      rc = try_cap(S, cap, &scratch);
      if (rc < 0) { rc = finish_with(out, scratch); goto done; }
      if (!rc) { floor_fail = cap; continue; }
      if (!rep->fails_above) rep->fails_above = lo;   /* the old lo fails above this mincap */
      lo = floor_fail;
      if (bisect(S, precision, &lo, &scratch) < 0) { rc = finish_with(out, scratch); goto done; }
      break;
    }
  }
  rep->lo = lo;

  /* 7. monotonic above? */
  for (int i = 0; for_row && i < MINCAP_NSTEPS && !rep->fails_above; i++) {
    uint64_t cap = (uint64_t)ceil((double)rep->hi * (1.0 + mincap_steps[i]));
    struct run_result *chk = &S->runs[S->best == 0 ? 1 : 0];
    if (known_ran_out(S, cap)) probe_known(S, cap, chk);
    else if (uncapped_answers(S, cap)) probe_by_uncapped(S, cap, chk);
    else probe(base, cap, progress, rep, chk);
    if (chk->exit_class) { rc = finish_with(out, chk); goto done; }
    if (!completes(chk)) {
      rep->fails_above = cap;
      break;
    }
  }
  *out = S->runs[S->best];
  out->mincap_bytes = rep->hi;
  out->mincap_x = (double)rep->hi / (double)P;
  out->cap_bytes = rep->hi;
  out->cap_x = 0;
  if (rep->fails_above) {
    double pct = 100.0 * ((double)rep->fails_above / (double)rep->hi - 1.0);
    snprintf(out->status, sizeof out->status, "ok: non-monotonic (fails at %llu bytes = +%.0f%%)",
             (unsigned long long)rep->fails_above, pct);
  }
  rc = out->exit_class;
done:
  free(S->kept);
  free(S);
  if (!rc && for_row) {   /* the row kept (only it): widened by its strategy's other bound at the cap it ran under */
    struct run_spec s = mincap_probe_spec(base, out->cap_bytes);
    model_bound_row(&s, out);
  }
  return rc;
}

int mincap_find(const struct run_spec *base, double precision, int progress,
                struct run_result *out, struct mincap_report *rep) {
  return search(base, precision, progress, 1, NULL, NULL, out, rep);
}

int mincap_find_known(const struct run_spec *base, double precision, int progress, const struct mincap_known *known,
                      struct run_result *out, struct mincap_report *rep) {
  return search(base, precision, progress, 1, known, NULL, out, rep);
}

int mincap_need(const struct run_spec *base, double precision, const struct mincap_stop *stop, struct run_result *out,
                struct mincap_report *rep) {
  struct run_spec probes = *base;
  probes.untimed = 1;   /* only the cap is read: no call of a probe timed on its own */
  return search(&probes, precision, 0, 0, NULL, stop, out, rep);
}

int mincap_uncapped_stands(const struct run_result *row, const struct run_result *uncapped) {
  return uncapped_stands_at(uncapped, row->blind_unreached, row->mincap_bytes);
}

/* one precision step below a found cap */
static uint64_t step_below(uint64_t cap, double precision) {
  if (!(precision > 0 && precision < 1)) precision = MINCAP_PRECISION_DEFAULT;
  uint64_t below = (uint64_t)floor((double)cap * (1.0 - precision));
  return below >= cap ? cap - 1 : below;
}

int mincap_below_floor(const struct run_result *row, double precision) {
  return row->mincap_bytes && step_below(row->mincap_bytes, precision) < row->peak_requested;
}

int mincap_confirm(const struct run_spec *base, const struct device_config *on, const struct run_result *row,
                   const struct run_result *uncapped, double precision, char *msg, size_t len, int *runs) {
  uint64_t cap = row->mincap_bytes;
  uint64_t below = step_below(cap, precision);
  struct run_result *r = malloc(3 * sizeof *r);
  if (!r) { snprintf(msg, len, "out of host memory"); return -1; }
  int rc = 1;
  int by_uncapped = mincap_uncapped_stands(row, uncapped);
  int floor_below = mincap_below_floor(row, precision);
  if (runs) *runs = (by_uncapped ? 0 : 1) + (floor_below ? 0 : 2);
  if (by_uncapped) r[0] = *uncapped;        /* never met the cap: the run at it, call for call */
  else replay_at(base, on, cap, 0, &r[0]);     /* on the other device, at the mincap */
  if (floor_below) {                        /* under the peak requested: every run runs out, on any device */
    runs_out_unreplayed(below, &r[1]);
    runs_out_unreplayed(below, &r[2]);
  } else {
    replay_at(base, NULL, below, 0, &r[1]);    /* where the search ran, one step below */
    replay_at(base, on, below, 0, &r[2]);      /* on the other device, one step below */
  }
  char b[32], c[32];
  for (int i = 0; i < 3; i++)
    if (r[i].exit_class) { snprintf(msg, len, "%s", r[i].status); rc = -1; goto out; }
  if (!completes(&r[0])) {
    snprintf(msg, len, "at the mincap, %llu bytes, %s ends '%s' at event %lld (%s says it completes with %s reserved)",
             (unsigned long long)cap, on->kind, r[0].status, (long long)r[0].first_oom_event, base->device.kind,
             fmt_bytes(row->peak_reserved, b, sizeof b));
    rc = 0;
  } else if (r[0].peak_reserved != row->peak_reserved) {
    snprintf(msg, len, "at the mincap, %llu bytes, %s reserves %s, %s %s", (unsigned long long)cap, on->kind,
             fmt_bytes(r[0].peak_reserved, b, sizeof b), base->device.kind, fmt_bytes(row->peak_reserved, c, sizeof c));
    rc = 0;
  } else if (completes(&r[1]) != completes(&r[2])) {
    snprintf(msg, len, "one step below the mincap, at %llu bytes, %s %s but %s %s", (unsigned long long)below,
             base->device.kind, completes(&r[1]) ? "completes" : "runs out", on->kind, completes(&r[2]) ? "completes" : "runs out");
    rc = 0;
  } else if (completes(&r[1]) && r[1].peak_reserved != r[2].peak_reserved) {
    snprintf(msg, len, "one step below the mincap, at %llu bytes, %s reserves %s, %s %s", (unsigned long long)below,
             on->kind, fmt_bytes(r[2].peak_reserved, b, sizeof b), base->device.kind, fmt_bytes(r[1].peak_reserved, c, sizeof c));
    rc = 0;
  } else {
    snprintf(msg, len, "completes at %llu bytes with %s reserved%s, %s one step below%s, as on %s", (unsigned long long)cap,
             fmt_bytes(r[0].peak_reserved, b, sizeof b), by_uncapped ? " (its uncapped run there, which never met the cap)" : "",
             completes(&r[2]) ? "completes" : "runs out", floor_below ? " (under its peak requested: no run fits there)" : "",
             base->device.kind);
  }
out:
  free(r);
  return rc;
}
