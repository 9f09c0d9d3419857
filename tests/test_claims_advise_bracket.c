/* test_claims_advise_bracket.c - the published "do advise's variations bracket reruns?"
 * figures on the recorded H100 jobs (tests/data/recorded/advise; docs/advise.md's real-reruns
 * table, tests/validate/advise_bracket.py), kept true by make test. For each job (varlen,
 * ckpt) advise's 20 variations of seed 1 (its defaults: 20, seed 1) give, per setting, the
 * spread of the smallest working limit as a multiple of each variation's own peak
 * requested (advise_needs on every variation, as advise does for the pick and the
 * references under a limit); seeds 2 and 3, each rerun's smallest working limit (mincap,
 * precision 0.001, as the script), must need no more than the worst variation and no less
 * than the least one to within that precision (ckpt's pick on seed 2 needs 1.01149 x, the
 * least variation 1.01151: said as such). Seeds 2-3 are a BUILD set
 * now (docs/evidence.md: advise's variation method changed after seed 3 was read), so this
 * checks that a figure stays true, not a prediction. The figures are printed; a change that
 * moves any of them past the expected value by more than 0.0005 fails and names it. */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "advise.h"
#include "mincap.h"
#include "replay.h"
#include "variations.h"

struct bracket_case {
  const char *job, *setting, *spec;
  double vmin, vmax;        /* the variations' spread, x each one's peak requested */
  double seed2, seed3;   /* each rerun's smallest working limit, x its own peak requested */
};

/* recomputed on this commit's code (advise: variations redrawn when one asks > 1% more at
 * once than the recorded run; ranked by worst case), as advise_bracket.py prints them */
static const struct bracket_case cases[] = {
    {"varlen", "expandable_segments:True (advise's pick)", "expandable", 1.0011, 1.0080, 1.0039, 1.0036},
    {"varlen", "PyTorch's default", "caching", 1.0783, 1.1566, 1.0849, 1.1298},
    {"ckpt", "expandable_segments:True (advise's pick)", "expandable", 1.0115, 1.0286, 1.0115, 1.0131},
    {"ckpt", "PyTorch's default", "caching", 1.0810, 1.2697, 1.2262, 1.1548},
};
#define TOL 0.0005        /* a published figure (4 decimals) */
#define PRECISION 0.001   /* mincap's relative precision here: below the spread by less is inside it */

/* "inside", "covered, below the lowest variation by D (within mincap's precision)", or "NOT covered" */
static const char *verdict(double x, double lo, double hi, char *buf, size_t n) {
  if (x > hi) snprintf(buf, n, "NOT covered: above the worst variation by %.5f", x - hi);
  else if (x >= lo) snprintf(buf, n, "inside");
  else if (x >= lo * (1 - PRECISION)) snprintf(buf, n, "covered; below the lowest variation by %.5f, within mincap's precision", lo - x);
  else snprintf(buf, n, "covered, but below the spread by %.5f", lo - x);
  return buf;
}

static double heldout_x(const char *path, const char *spec) {
  struct run_spec s = {.trace = path, .allocator = spec, .trace_device = -1, .world = 1, .seed = 1,
                       .device = {.kind = "sim"}, .on_oom = ON_OOM_STOP, .quiet = 1};
  struct run_result r;
  run_result_init(&r);
  if (mincap_find(&s, 0.001, 0, &r, NULL) != 0 || !r.mincap_bytes || !r.peak_requested) return 0;
  return (double)r.mincap_bytes / (double)r.peak_requested;
}

TEST(claims_advise_variations_of_seed_1_bracket_the_recorded_reruns_seeds_2_and_3) {
  const char *jobs[] = {"varlen", "ckpt"};
  int checked = 0;
  for (int j = 0; j < 2; j++) {
    char path[256], err[FB_ERRLEN];
    snprintf(path, sizeof path, "tests/data/recorded/advise/%s_seed1.pickle.gz", jobs[j]);
    struct event_buffer buf;
    CHECK_MSG(event_buffer_load(&buf, path, -1, err) == 0, "%s: %s", path, err);
    struct variation_set vs;
    CHECK_MSG(variations_build(&buf, VARIATIONS_DEFAULT, 1, &vs, err) == 0, "%s: %s", path, err);
    struct run_spec base = {.trace = path, .events = &buf, .trace_device = -1, .world = 1, .seed = 1,
                            .device = {.kind = "sim"}, .on_oom = ON_OOM_STOP, .quiet = 1};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      const struct bracket_case *bc = &cases[k];
      if (strcmp(bc->job, jobs[j])) continue;
      struct advise_candidate c;
      memset(&c, 0, sizeof c);
      snprintf(c.spec, sizeof c.spec, "%s", bc->spec);
      c.fits = 1;
      int cls = advise_needs(&base, &vs, 2, 0, 1, &c, err);
      char h2[256], h3[256];
      snprintf(h2, sizeof h2, "tests/data/recorded/advise/%s_seed2.pickle.gz", bc->job);
      snprintf(h3, sizeof h3, "tests/data/recorded/advise/%s_seed3.pickle.gz", bc->job);
      double x2 = heldout_x(h2, bc->spec), x3 = heldout_x(h3, bc->spec);
      char v2[128], v3[128];
      printf("  %s, %s: variations %.5f..%.5f; seed 2 %.5f: %s; seed 3 %.5f: %s\n", bc->job, bc->setting, c.need_x_min,
             c.need_x_max, x2, verdict(x2, c.need_x_min, c.need_x_max, v2, sizeof v2), x3,
             verdict(x3, c.need_x_min, c.need_x_max, v3, sizeof v3));
      if (cls) { variations_free(&vs); event_buffer_free(&buf); }
      CHECK_MSG(cls == 0, "%s %s: advise_needs: %s", bc->job, bc->spec, err);
      /* the claim: each rerun needs no more than the worst variation (covered, strictly), and
       * no less than the least one, to within mincap's precision (inside the spread) */
      CHECK_MSG(c.need_x_max > 0 && x2 > 0 && x3 > 0, "%s %s: a smallest working limit not found", bc->job, bc->spec);
      CHECK_MSG(x2 >= c.need_x_min * (1 - PRECISION) && x2 <= c.need_x_max, "%s %s: seed 2's %.5f outside the variations' %.5f..%.5f",
                bc->job, bc->setting, x2, c.need_x_min, c.need_x_max);
      CHECK_MSG(x3 >= c.need_x_min * (1 - PRECISION) && x3 <= c.need_x_max, "%s %s: seed 3's %.5f outside the variations' %.5f..%.5f",
                bc->job, bc->setting, x3, c.need_x_min, c.need_x_max);
      /* the published figures themselves */
      CHECK_MSG(fabs(c.need_x_min - bc->vmin) <= TOL && fabs(c.need_x_max - bc->vmax) <= TOL,
                "%s %s: the variations' spread %.4f..%.4f, published %.4f..%.4f", bc->job, bc->setting, c.need_x_min,
                c.need_x_max, bc->vmin, bc->vmax);
      CHECK_MSG(fabs(x2 - bc->seed2) <= TOL && fabs(x3 - bc->seed3) <= TOL, "%s %s: seeds 2, 3 need %.4f, %.4f, published %.4f, %.4f",
                bc->job, bc->setting, x2, x3, bc->seed2, bc->seed3);
      checked++;
    }
    variations_free(&vs);
    event_buffer_free(&buf);
  }
  CHECK_EQ(checked, 4);
}
