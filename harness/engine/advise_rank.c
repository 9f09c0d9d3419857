/* advise_rank.c - how `advise` orders the settings it replayed, which of them tie, and
 * which one it recommends (see advise.h).
 *
 * The order is by what the table shows: completing on more variations first (among those
 * completing nowhere alike, the one that got further), then the worst case (advise_worst:
 * under a limit, for the settings whose smallest working limit was searched on every
 * variation, that limit - a caching allocator reserves what the limit lets it keep, so its
 * peak reserved overstates what a rerun needs; otherwise the largest peak reserved over
 * the variations, and where it ran out, the smallest limit it needs there), then the
 * fewest knobs changed, then the recorded run's peak reserved, then
 * driver time. So a setting that is no better on worst case, recorded run and knob count
 * never ranks above one that is better on one of them.
 *
 * Ties: settings that complete on the same variations and whose worst cases lie within
 * ADVISE_TIE of the best of them are one tie, led by the simplest (fewest knobs: each
 * interval of a roundup list counts), then by the order above. The table shows a tie as its
 * leader's row ("and 11 like it"), so its top does not move when the search visits a few
 * more or fewer settings. The recommendation is the first row that completes the recorded
 * run: the leader of the best tie, unless an equally simple member of that tie, not worse
 * on both the worst case and the recorded run, has a modeled driver time lower by more
 * than what matters. Nothing completes the recorded run
 * under the limit: no recommendation. */
#include "advise.h"
#include <stdlib.h>
#include <string.h>

static int knob_count_of(const struct advise_candidate *c) {
  return c->origin == ADVISE_RECORDED ? 99 : advise_knobs_count(&c->k);   /* recorded: last among equals */
}

static int cmp_u(uint64_t x, uint64_t y) { return x < y ? -1 : x > y; }

uint64_t advise_worst(const struct advise_candidate *c) {
  return c->fits && c->need_x_max > 0 && c->need ? c->need : c->worst_reserved;
}

int advise_compare(const struct advise_candidate *a, const struct advise_candidate *b, uint64_t budget) {
  (void)budget;                                     /* the budget acted in the replays (the cap) */
  int d;
  if (a->fits_variations != b->fits_variations) return a->fits_variations > b->fits_variations ? -1 : 1;
  if (!a->fits && (d = cmp_u(b->min_events, a->min_events))) return d;   /* got further where it failed */
  if ((d = cmp_u(advise_worst(a), advise_worst(b)))) return d;
  if ((d = knob_count_of(a) - knob_count_of(b))) return d;
  if ((d = cmp_u(a->r.peak_reserved, b->r.peak_reserved))) return d;
  if ((d = cmp_u(a->mean_driver_ns, b->mean_driver_ns))) return d;
  return strcmp(a->spec, b->spec);
}

/* inside one tie: the fewest knobs first, then the order above */
static int cmp_in_tie(const void *x, const void *y) {
  const struct advise_candidate *a = x, *b = y;
  int d;
  if ((d = knob_count_of(a) - knob_count_of(b))) return d;
  return advise_compare(a, b, 0);
}

/* b belongs to the tie led by a (the best worst case of its tie) */
static int ties_with(const struct advise_candidate *lead, const struct advise_candidate *b) {
  if (b->fits_variations != lead->fits_variations || b->failed_mask != lead->failed_mask) return 0;
  if (!lead->fits && b->min_events != lead->min_events) return 0;
  return (double)advise_worst(b) <= (double)advise_worst(lead) * (1 + ADVISE_TIE);
}

static int cmp_sorted(const void *x, const void *y) { return advise_compare(x, y, 0); }

void advise_rank(struct advise_result *res) {
  qsort(res->c, (size_t)res->n, sizeof *res->c, cmp_sorted);
  for (int i = 0; i < res->n;) {
    int j = i + 1;
    while (j < res->n && ties_with(&res->c[i], &res->c[j])) j++;
    qsort(&res->c[i], (size_t)(j - i), sizeof *res->c, cmp_in_tie);
    for (int k = i; k < j; k++) res->c[k].tie = i;
    i = j;
  }
}

int advise_pick(const struct advise_result *res) {
  int pick = -1;
  for (int i = 0; i < res->n && pick < 0; i++)
    if (!(res->c[i].failed_mask & 1) && res->c[i].origin == ADVISE_SEARCHED) pick = i;   /* completes the recorded run */
  if (pick < 0) return -1;
  const struct advise_candidate *p = &res->c[pick];
  int best = pick;
  for (int i = pick; i < res->n && res->c[i].tie == p->tie; i++) {
    const struct advise_candidate *c = &res->c[i];
    if (c->origin != ADVISE_SEARCHED || (c->failed_mask & 1) || knob_count_of(c) != knob_count_of(p)) continue;
    if (advise_worst(c) > advise_worst(p) && c->r.peak_reserved >= p->r.peak_reserved)
      continue;                                     /* worse on worst case and recorded run: driver time never lifts it */
    if (res->c[best].mean_driver_ns > c->mean_driver_ns && p->mean_driver_ns - c->mean_driver_ns > res->driver_matters_ns)
      best = i;
  }
  return best;
}
