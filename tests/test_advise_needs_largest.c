/* test_advise_needs_largest.c - advise's need of a setting that did not fit everywhere is
 * its largest need over the variations it failed, and the variation named is the first
 * with it. advise_needs stops a variation's search once it can be neither (struct
 * mincap_stop), searching the variations largest peak requested first; the rule: what it
 * gives is what every search run to its end gives, on the variations of a recorded OOM
 * snapshot (their needs differ, the largest not on the largest peak), and with the
 * variation of the largest need copied before it (searched last: the copy is named) and
 * after it (searched first: it is named), on one thread and on two. */
#include "test.h"
#include "advise.h"
#include "mincap.h"
#include "replay.h"
#include "variations.h"

#define NVAR 6

/* every search to its end: the largest need and the first variation with it */
static void full_searches(const struct run_spec *base, const struct variation_set *vs, const char *spec, uint64_t *need, int *worst) {
  *need = 0;
  *worst = -1;
  for (int v = 0; v < vs->n; v++) {
    struct run_spec s = *base;
    s.events = &vs->v[v];
    s.allocator = spec;
    struct run_result r;
    run_result_init(&r);
    CHECK_EQ(mincap_need(&s, ADVISE_NEED_PRECISION, NULL, &r, NULL), 0);
    CHECK_MSG(r.mincap_bytes > 0, "%s, variation %d: no need found", spec, v);
    if (r.mincap_bytes > *need) { *need = r.mincap_bytes; *worst = v; }
  }
}

/* advise_needs as advise asks it for a setting that failed on every variation */
static void advise_largest(const struct run_spec *base, const struct variation_set *vs, const char *spec, int threads,
                           uint64_t *need, int *worst) {
  struct advise_candidate c;
  memset(&c, 0, sizeof c);
  snprintf(c.spec, sizeof c.spec, "%s", spec);
  c.failed_mask = (1ull << vs->n) - 1;
  char err[FB_ERRLEN];
  CHECK_MSG(advise_needs(base, vs, threads, 1ull << 40, 0, &c, err) == 0, "%s", err);
  *need = c.need;
  *worst = c.worst_variation;
}

/* advise_needs against every search to its end; *full_v: the variation those name */
static void check_same(const struct run_spec *base, const struct variation_set *vs, const char *spec, const char *how, int *full_v) {
  uint64_t full, got;
  int got_v;
  full_searches(base, vs, spec, &full, full_v);
  for (int threads = 1; threads <= 2; threads++) {
    advise_largest(base, vs, spec, threads, &got, &got_v);
    CHECK_MSG(got == full && got_v == *full_v, "%s, %s, %d thread(s): need %llu on variation %d, every search to its end %llu on %d",
              spec, how, threads, (unsigned long long)got, got_v, (unsigned long long)full, *full_v);
  }
}

TEST(advise_need_is_the_largest_over_the_variations_as_every_full_search_gives_it) {
  struct event_buffer b;
  char err[FB_ERRLEN];
  CHECK_MSG(event_buffer_load(&b, "tests/data/recorded/advise_oom/gpt_varlen_fp16_ckpt2/oom.pickle.gz", -1, err) == 0, "%s", err);
  struct variation_set vs;
  CHECK_MSG(variations_build(&b, NVAR, 1, &vs, err) == 0, "%s", err);
  CHECK_EQ(vs.n, NVAR);
  struct run_spec base = {.trace = "gpt_varlen_fp16_ckpt2/oom.pickle.gz", .events = &b, .trace_device = -1, .world = 1, .seed = 1,
                          .device = {.kind = "sim"}, .on_oom = ON_OOM_STOP, .quiet = 1};
  const char *specs[] = {"caching", "expandable", "caching:roundup_power2_divisions=4", "bfc"};
  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
    int worst, tied;
    check_same(&base, &vs, specs[k], "as built", &worst);
    /* the variation with the largest need copied to the first and to the last place: a tie
     * before it (the copy is named) and after it (it is) */
    struct event_buffer keep0 = vs.v[0], keepn = vs.v[NVAR - 1];
    uint64_t peak0 = vs.peak[0], peakn = vs.peak[NVAR - 1];
    if (worst > 0) { vs.v[0] = vs.v[worst]; vs.peak[0] = 0; }   /* its peak read as the least: searched last */
    if (worst < NVAR - 1) { vs.v[NVAR - 1] = vs.v[worst]; vs.peak[NVAR - 1] = UINT64_MAX; }   /* and first */
    check_same(&base, &vs, specs[k], "with ties", &tied);
    CHECK_EQ(tied, 0);   /* the searches to their end name the copy in first place */
    vs.v[0] = keep0;
    vs.v[NVAR - 1] = keepn;
    vs.peak[0] = peak0;
    vs.peak[NVAR - 1] = peakn;
  }
  variations_free(&vs);
  event_buffer_free(&b);
}
