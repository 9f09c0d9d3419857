/* advise_rank.c - how `advise` orders the settings it replayed and which one it
 * recommends (see advise.h): the worst case over the variations first, then the fewest
 * knobs changed from PyTorch's defaults, driver time only where it is a share of the job
 * that matters. */
#include "advise.h"
#include <string.h>

static int knob_count_of(const struct advise_candidate *c) {
  return c->origin == ADVISE_RECORDED ? 99 : advise_knobs_count(&c->k);   /* recorded: last among equals */
}

static int cmp_u(uint64_t x, uint64_t y) { return x < y ? -1 : x > y; }

int advise_compare(const struct advise_candidate *a, const struct advise_candidate *b, uint64_t budget) {
  (void)budget;                                     /* the budget acted in the replays (the cap) */
  int d;
  if (a->fits_variations != b->fits_variations) return a->fits_variations > b->fits_variations ? -1 : 1;
  if (!a->fits && (d = cmp_u(b->min_events, a->min_events))) return d;   /* got further where it failed */
  if (a->worst_x != b->worst_x) return a->worst_x < b->worst_x ? -1 : 1;
  if ((d = cmp_u(a->worst_reserved, b->worst_reserved))) return d;
  if ((d = knob_count_of(a) - knob_count_of(b))) return d;
  if ((d = cmp_u(a->mean_driver_ns, b->mean_driver_ns))) return d;
  return strcmp(a->spec, b->spec);
}

/* how much there is to write: knobs, then the pieces of a roundup list */
static int simpler(const struct advise_candidate *a, const struct advise_candidate *b) {
  int d = knob_count_of(a) - knob_count_of(b);
  if (d) return d < 0;
  int ra = 0, rb = 0;
  for (int i = 1; i < ADVISE_INTERVALS; i++) {
    ra += a->k.roundup[i] != a->k.roundup[i - 1];
    rb += b->k.roundup[i] != b->k.roundup[i - 1];
  }
  return ra < rb;
}

/* what the pick compares: the worst-case need where it was searched, else worst_x */
static double measure(const struct advise_candidate *c, int by_need) { return by_need ? c->need_x_max : c->worst_x; }

/* Of the settings that fit on every variation, within ADVISE_TIE of the best worst case
 * and no worse than PyTorch's default's worst case, the simplest; among equally simple
 * ones the better ranked, unless another's driver time is lower by more than what
 * matters. res->c is ranked by advise_compare (the best first). */
int advise_pick(const struct advise_result *res) {
  if (!res->n || !res->c[0].fits) return -1;
  int by_need = 0;
  double best = 0;
  for (int i = 0; res->limited && i < res->n; i++) {   /* without a limit: what it will reserve */
    const struct advise_candidate *c = &res->c[i];
    if (c->fits && c->origin == ADVISE_SEARCHED && c->need_x_max > 0 && (!by_need || c->need_x_max < best)) {
      best = c->need_x_max;
      by_need = 1;
    }
  }
  if (!by_need) best = res->c[0].worst_x;
  double ceiling = best * (1 + ADVISE_TIE);
  for (int i = 0; i < res->n; i++) {
    const struct advise_candidate *c = &res->c[i];
    double m = measure(c, by_need);
    if (c->origin == ADVISE_SEARCHED && !advise_knobs_count(&c->k) && c->fits && m > 0 && m < ceiling)
      ceiling = m;                                  /* never more than doing nothing */
  }
  int pick = -1;
  for (int i = 0; i < res->n; i++) {
    const struct advise_candidate *c = &res->c[i];
    double m = measure(c, by_need);
    if (!c->fits || m <= 0 || m > ceiling || c->origin == ADVISE_RECORDED) continue;
    if (pick < 0) { pick = i; continue; }
    const struct advise_candidate *p = &res->c[pick];
    if (simpler(c, p)) { pick = i; continue; }
    if (simpler(p, c)) continue;
    /* equally simple: c ranks below p; it wins on driver time only where the difference matters */
    if (p->mean_driver_ns > c->mean_driver_ns && p->mean_driver_ns - c->mean_driver_ns > res->driver_matters_ns) pick = i;
  }
  return pick;
}
