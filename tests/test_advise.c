/* test_advise.c - `fragbench advise` and speaking PyTorch: the ranking rules, knob values
 * read off the trace, the recommendation never worse than expandable segments alone on
 * the bundled snapshots and fitting a budget, a budget below peak requested refused,
 * PYTORCH_CUDA_ALLOC_CONF parsed and written as PyTorch does, and only `recorded`
 * inheriting a snapshot's settings. */
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "advise.h"
#include "alloc_conf.h"
#include "caching_policy.h"
#include "results_read.h"

static struct advise_candidate cand(const char *spec, int fits_of_20, uint64_t worst, uint64_t driver, uint64_t events) {
  struct advise_candidate c;
  memset(&c, 0, sizeof c);
  snprintf(c.spec, sizeof c.spec, "%s", spec);
  c.nvariations = 20;
  c.fits_variations = fits_of_20;
  c.fits = fits_of_20 == 20;
  c.r.completed = c.fits;
  c.worst_reserved = worst;
  c.r.peak_reserved = worst;
  c.mean_driver_ns = driver;
  c.min_events = events;
  return c;
}

TEST(advise_ranks_by_the_worst_case_over_the_variations) {
  struct advise_candidate a = cand("caching", 20, 100, 50, 10), b = cand("expandable", 20, 90, 900, 10);
  b.k.expandable = 1;
  CHECK(advise_compare(&b, &a, 0) < 0);                 /* less worst-case memory wins, whatever the driver time */
  struct advise_candidate c = cand("caching:max_split_size_mb=64", 20, 90, 10, 10);
  c.k.max_split_mb = 64;
  struct advise_candidate d = cand("caching:max_split_size_mb=64,roundup_power2_divisions=4", 20, 90, 1, 10);
  d.k.roundup[0] = 4; d.k.roundup[5] = 4;
  d.k.max_split_mb = 64;
  CHECK(advise_compare(&c, &d, 0) < 0);                 /* equal worst case: fewer knobs changed, before driver time */
  struct advise_candidate e = cand("expandable", 20, 90, 5, 10);
  e.k.expandable = 1;
  CHECK(advise_compare(&e, &c, 0) < 0);                 /* equal worst case and knobs: less driver time */
  struct advise_candidate most = cand("caching:max_split_size_mb=20", 19, 10, 1, 5);
  CHECK(advise_compare(&a, &most, 1000) < 0);           /* fitting on every variation beats fitting on 19 of 20 */
  struct advise_candidate far = cand("caching", 0, 99, 1, 8), near = cand("expandable", 0, 99, 1, 3);
  CHECK(advise_compare(&far, &near, 1000) < 0);         /* fitting nowhere: the one that got further */
  CHECK(advise_compare(&a, &a, 0) == 0);
}

/* ranked and picked as advise_run does */
static void rank_and_pick(struct advise_result *res) {
  advise_rank(res);
  res->pick = advise_pick(res);
}

/* the recommendation: the simplest of the best tie (within ADVISE_TIE of its best worst
 * case), driver time only where it matters and never for a setting worse on both the
 * worst case and the recorded run */
TEST(advise_pick_is_the_simplest_of_the_best_tie) {
  struct advise_candidate c[4];
  c[0] = cand("caching:max_split_size_mb=64,roundup_power2_divisions=4", 20, 1000, 10, 10);
  c[0].k.max_split_mb = 64; c[0].k.roundup[0] = 4;
  c[1] = cand("expandable", 20, 1015, 90, 10);
  c[1].k.expandable = 1;
  c[2] = cand("caching:max_split_size_mb=128", 20, 1019, 10, 10);
  c[2].k.max_split_mb = 128;
  c[3] = cand("caching", 20, 1100, 5, 10);
  struct advise_result res;
  memset(&res, 0, sizeof res);
  res.c = c;
  res.n = 4;
  res.driver_matters_ns = 100;
  rank_and_pick(&res);
  CHECK_STR(res.c[res.pick].spec, "expandable");        /* one knob, +1.5%: the tie's simplest, best worst case first */
  CHECK_EQ(res.c[0].tie, res.c[2].tie);                 /* 1000, 1015, 1019: one tie */
  CHECK(res.c[3].tie != res.c[0].tie);                  /* the default, +10%: its own */
  CHECK_STR(res.c[3].spec, "caching");
  res.driver_matters_ns = 50;                           /* max_split_size_mb=128: 80 ns faster, but worse on both */
  rank_and_pick(&res);
  CHECK_STR(res.c[res.pick].spec, "expandable");
  for (int i = 0; i < 4; i++)
    if (!strcmp(c[i].spec, "caching:max_split_size_mb=128")) c[i].r.peak_reserved = 900;   /* better on the recorded run */
  rank_and_pick(&res);
  CHECK_STR(res.c[res.pick].spec, "caching:max_split_size_mb=128");   /* not dominated: driver time decides */
  res.driver_matters_ns = 100;
  rank_and_pick(&res);
  CHECK_STR(res.c[res.pick].spec, "expandable");        /* a difference that does not matter is not weighed */
  for (int i = 0; i < 4; i++)
    if (!strcmp(c[i].spec, "caching")) { c[i].worst_reserved = c[i].r.peak_reserved = 1010; }
  rank_and_pick(&res);
  CHECK_STR(res.c[res.pick].spec, "caching");           /* the default within the tie: nothing to change */
}

/* a setting no better on worst case, recorded run and knob count never ranks above one
 * better on one of them: the uncapped gpt_varlen case, where expandable segments alone
 * (24.92 / 24.59 GiB, 1 knob) ranked 26th under a 2-knob setting (25.17 / 25.17) whose
 * worst overhead ratio happened to be lower */
static int dominates(const struct advise_candidate *a, const struct advise_candidate *b) {
  if (a->fits_variations != b->fits_variations || a->origin != ADVISE_SEARCHED || b->origin != ADVISE_SEARCHED) return 0;
  int ka = advise_knobs_count(&a->k), kb = advise_knobs_count(&b->k);
  uint64_t wa = advise_worst(a), wb = advise_worst(b);
  return wa <= wb && a->r.peak_reserved <= b->r.peak_reserved && ka <= kb &&
         (wa < wb || a->r.peak_reserved < b->r.peak_reserved || ka < kb);
}

TEST(advise_never_ranks_a_dominated_setting_above_the_one_that_dominates_it) {
  struct advise_candidate c[3];
  c[0] = cand("expandable:roundup_power2_divisions=16", 20, 27025497784ull, 10, 10);   /* 25.17 GiB */
  c[0].k.expandable = 1; for (int i = 0; i < ADVISE_INTERVALS; i++) c[0].k.roundup[i] = 16;
  c[1] = cand("expandable", 20, 26757082808ull, 10, 10);                              /* 24.92 GiB */
  c[1].k.expandable = 1;
  c[1].r.peak_reserved = 26402748334ull;                                              /* 24.59 GiB */
  c[2] = cand("caching", 20, 40000000000ull, 1, 10);
  struct advise_result res;
  memset(&res, 0, sizeof res);
  res.c = c;
  res.n = 3;
  res.driver_matters_ns = 1;
  rank_and_pick(&res);
  CHECK_STR(res.c[0].spec, "expandable");
  CHECK_STR(res.c[res.pick].spec, "expandable");
  for (int i = 0; i < res.n; i++)
    for (int j = i + 1; j < res.n; j++)
      CHECK_MSG(!dominates(&res.c[j], &res.c[i]), "%s ranked above %s, which is better", res.c[i].spec, res.c[j].spec);
}

/* nothing fits every variation: the setting that completes the recorded run and the most
 * variations is still recommended; nothing completes the recorded run: none */
TEST(advise_pick_needs_only_the_recorded_run_to_complete) {
  struct advise_candidate c[2];
  c[0] = cand("expandable", 17, 1000, 10, 100);
  c[0].k.expandable = 1;
  c[0].failed_mask = (1ull << 3) | (1ull << 7) | (1ull << 9);
  c[1] = cand("caching", 12, 1000, 10, 100);
  c[1].failed_mask = 0xff0;
  struct advise_result res;
  memset(&res, 0, sizeof res);
  res.c = c;
  res.n = 2;
  rank_and_pick(&res);
  CHECK(res.pick >= 0);
  CHECK_STR(res.c[res.pick].spec, "expandable");
  c[0].failed_mask |= 1; c[1].failed_mask |= 1;         /* neither completes the recorded run (variation 0) */
  rank_and_pick(&res);
  CHECK_EQ(res.pick, -1);
}

/* ties show as one row, so the table's top is the same whichever extra settings the
 * search visited: the simplest of the best tie leads it */
TEST(advise_ties_lead_with_the_simplest_whatever_else_was_searched) {
  struct advise_candidate c[12];
  int n = 0;
  for (int i = 0; i < 9; i++) {                         /* 9 roundup lists, a few MiB apart, 7-9 pieces */
    char spec[64];
    snprintf(spec, sizeof spec, "expandable:roundup_power2_divisions=[list%d]", i);
    c[n] = cand(spec, 20, 25000000000ull + (uint64_t)i * 3000000, 10, 10);
    c[n].k.expandable = 1;
    for (int j = 0; j < 8; j++) c[n].k.roundup[j] = (uint64_t)(1 + (i + j) % 4);
    n++;
  }
  c[n] = cand("expandable", 20, 25200000000ull, 10, 10);   /* +0.8%: inside the tie */
  c[n++].k.expandable = 1;
  struct advise_result res;
  memset(&res, 0, sizeof res);
  res.c = c;
  res.n = n;
  rank_and_pick(&res);
  CHECK_STR(res.c[0].spec, "expandable");
  for (int i = 1; i < n; i++) CHECK_EQ(res.c[i].tie, res.c[0].tie);   /* "and 9 like it" */
  res.n = 4;                                            /* a search that visited fewer of the lists */
  c[3] = cand("expandable", 20, 25200000000ull, 10, 10);
  c[3].k.expandable = 1;
  rank_and_pick(&res);
  CHECK_STR(res.c[0].spec, "expandable");
}

TEST(advise_knob_values_come_from_the_request_sizes) {
  /* two clusters of large requests: 30..32 MiB and 200..260 MiB */
  uint64_t sizes[400];
  size_t n = 0;
  for (int i = 0; i < 200; i++) sizes[n++] = (30ull << 20) + (uint64_t)(i % 5) * (512ull << 10);
  for (int i = 0; i < 100; i++) sizes[n++] = (200ull << 20) + (uint64_t)(i % 4) * (20ull << 20);
  for (int i = 0; i < 100; i++) sizes[n++] = 4096;
  struct advise_space sp;
  advise_space_from_sizes(sizes, n, 1ull << 30, 0, &sp);
  CHECK_EQ(sp.split_mb[0], 0);                          /* the default first */
  int just_above_small = 0;
  for (int i = 0; i < sp.nsplit; i++) {
    CHECK(sp.split_mb[i] == 0 || sp.split_mb[i] >= 20);
    if (sp.split_mb[i] == 33) just_above_small = 1;   /* 32 MiB is the small cluster's top */
  }
  CHECK_MSG(just_above_small, "no max_split_size_mb between the clusters");
  int spread = 0;
  for (int i = 0; i < sp.nnon; i++) if (sp.non_split_mb[i] == 61) spread = 1;   /* 200..260 MiB + 1 */
  CHECK_MSG(spread, "no max_non_split_rounding_mb from the large cluster's spread");
  CHECK(sp.nroundup > 5);
  CHECK_EQ(sp.ngc, 1);                                  /* GC only with a budget */
  advise_space_from_sizes(sizes, n, 1ull << 30, 2ull << 30, &sp);
  CHECK(sp.ngc > 3);
  for (int i = 1; i < sp.ngc; i++) CHECK(sp.gc[i] > 0.5 && sp.gc[i] < 1);   /* above peak / budget */
}

static const struct { const char *file; uint64_t pytorch_expandable; } bundled[] = {
  {"gpt_train.pickle.gz", 10055843840ull},     /* tests/data/reference.csv */
  {"leaky_losses.pickle.gz", 404750336ull},
  {"resnet_varsize.pickle.gz", 3309305856ull},
};

static int spec_index(const struct advise_result *res, const char *spec) {
  for (int i = 0; i < res->n; i++) if (!strcmp(res->c[i].spec, spec)) return i;
  return -1;
}

static int worst_fitting(const struct advise_result *res, uint64_t *best) {
  *best = UINT64_MAX;
  for (int i = 0; i < res->n; i++) if (res->c[i].fits && res->c[i].worst_reserved < *best) *best = res->c[i].worst_reserved;
  return *best != UINT64_MAX;
}

TEST(advise_recommendation_never_needs_more_than_the_default_over_the_variations) {
  for (size_t t = 0; t < sizeof bundled / sizeof bundled[0]; t++) {
    struct advise_opts o = {.trace = test_data(bundled[t].file), .trace_device = -1, .variations = 6};
    o.device.kind = "sim";
    struct advise_result res;
    char err[FB_ERRLEN];
    CHECK_MSG(advise_run(&o, &res, err) == 0, "%s: %s", bundled[t].file, err);
    int d = spec_index(&res, "caching"), e = spec_index(&res, "expandable");
    CHECK(e >= 0 && d >= 0);
    CHECK(res.c[0].fits && res.c[0].fits_variations == res.nvariations);
    CHECK_MSG(res.nvariations == 6, "%s: %d variations (%s)", bundled[t].file, res.nvariations, res.variations_how);
    CHECK_MSG(res.c[0].worst_reserved <= res.c[d].worst_reserved, "%s: %llu > the default's %llu", bundled[t].file,
              (unsigned long long)res.c[0].worst_reserved, (unsigned long long)res.c[d].worst_reserved);
    uint64_t best;
    CHECK(worst_fitting(&res, &best));
    CHECK((double)res.c[0].worst_reserved <= (double)best * (1 + ADVISE_TIE));
    CHECK(res.c[0].worst_reserved >= res.c[0].r.peak_reserved);          /* the recorded run is one variation */
    CHECK(res.c[0].headroom == (int64_t)res.headroom_of - (int64_t)res.c[0].worst_reserved);
    CHECK(res.c[0].r.alloc_conf[0]);
    for (int i = 0; i < res.n; i++)                     /* never below a setting it is no better than */
      for (int j = i + 1; j < res.n; j++)
        CHECK_MSG(!dominates(&res.c[j], &res.c[i]), "%s: %d %s (%llu, %llu, %d) above %d %s (%llu, %llu, %d)", bundled[t].file,
                  i, res.c[i].spec, (unsigned long long)advise_worst(&res.c[i]), (unsigned long long)res.c[i].r.peak_reserved,
                  advise_knobs_count(&res.c[i].k), j, res.c[j].spec, (unsigned long long)advise_worst(&res.c[j]),
                  (unsigned long long)res.c[j].r.peak_reserved, advise_knobs_count(&res.c[j].k));
    CHECK(res.n > 20);                                  /* a search, not a fixed list */
    advise_free(&res);
  }
}

TEST(advise_with_budget_recommends_a_setting_that_completes_under_it_on_every_variation) {
  uint64_t budget = 10000000000ull;                     /* below what the default reserves on gpt_train */
  struct advise_opts o = {.trace = test_data("gpt_train.pickle.gz"), .trace_device = -1, .budget = budget, .variations = 6};
  o.device.kind = "sim";
  struct advise_result res;
  char err[FB_ERRLEN];
  CHECK_MSG(advise_run(&o, &res, err) == 0, "%s", err);
  CHECK(res.c[0].fits && res.c[0].r.completed && !res.c[0].r.oom_count);
  CHECK_EQ(res.c[0].fits_variations, res.nvariations);
  CHECK(res.c[0].worst_reserved <= budget);
  CHECK(res.c[0].headroom >= 0 && (uint64_t)res.c[0].headroom == budget - advise_worst(&res.c[0]));
  CHECK_EQ(res.c[0].r.cap_bytes, budget);
  CHECK_EQ(res.headroom_of, budget);
  for (int i = 0; i < res.n; i++)                       /* headroom is negative exactly where it does not fit */
    CHECK(res.c[i].fits ? res.c[i].headroom >= 0 : res.c[i].headroom < 0);
  advise_free(&res);
}

/* the job itself asks for more than the limit: no setting completes even the recorded
 * run, so exit 1 - said, and advised without the limit, for the memory each needs */
TEST(advise_budget_below_peak_requested_exits_1_and_advises_without_it) {
  char outp[512], errp[512];
  snprintf(outp, sizeof outp, "%s/adv_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/adv_err.txt", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", test_data("leaky_losses.pickle.gz"), "--budget", "300MB", "--variations", "2",
                    NULL), 1);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "below the trace's peak requested 386827244 bytes");
  CHECK_CONTAINS(e, "advising without a budget");
  free(e);
}

TEST(advise_cli_ends_with_the_line_to_use_and_writes_the_recommendation_first) {
  char outp[512], errp[512], csv[512];
  snprintf(outp, sizeof outp, "%s/adv_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/adv_err.txt", test_tmpdir());
  snprintf(csv, sizeof csv, "%s/advise-leaky_losses.csv", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", test_data("leaky_losses.pickle.gz"), "--variations", "4", "--out", csv, NULL), 0);
  char *o = test_read_file(outp);
  CHECK(o && !strncmp(o, "PYTORCH_CUDA_ALLOC_CONF=", 24));
  struct results t;
  char err[256];
  CHECK_MSG(results_load(csv, &t, err, sizeof err) == 0, "%s", err);
  CHECK(t.nrows > 20);
  char want[700];
  snprintf(want, sizeof want, "PYTORCH_CUDA_ALLOC_CONF=%s\n", results_get(&t, 0, "alloc_conf"));
  CHECK_STR(o, want);
  CHECK_STR(results_get(&t, 0, "run_id"), "1");
  const char *fits = results_get(&t, 0, "fits_variations"), *head = results_get(&t, 0, "headroom_bytes");
  CHECK_MSG(fits && head && strchr(fits, '/'), "no fits_variations / headroom_bytes columns");
  CHECK(strtoll(head, NULL, 10) > 0);
  results_free(&t);
  free(o);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "variations replayed in");
  CHECK_CONTAINS(e, "headroom");
  CHECK_CONTAINS(e, "fits on");
  CHECK_CONTAINS(e, "draws its iterations from those recorded");
  free(e);
}

TEST(alloc_conf_reads_pytorch_strings) {
  char spec[700], ign[200], err[FB_ERRLEN];
  CHECK(!alloc_conf_to_spec("expandable_segments:True,max_split_size_mb:128", spec, sizeof spec, ign, sizeof ign, err));
  CHECK_STR(spec, "expandable:max_split_size_mb=128");
  CHECK(!alloc_conf_to_spec(" roundup_power2_divisions:[256:1,512:2,>:8], garbage_collection_threshold:0.8 ", spec, sizeof spec, ign, sizeof ign, err));
  CHECK_STR(spec, "caching:roundup_power2_divisions=[256:1,512:2,>:8],garbage_collection_threshold=0.8");
  CHECK(!alloc_conf_to_spec("backend:cudaMallocAsync", spec, sizeof spec, ign, sizeof ign, err));
  CHECK_STR(spec, "async");
  CHECK(!alloc_conf_to_spec("expandable_segments:False,release_lock_on_cudamalloc:True", spec, sizeof spec, ign, sizeof ign, err));
  CHECK_STR(spec, "caching");
  CHECK_STR(ign, "release_lock_on_cudamalloc");
  CHECK(alloc_conf_to_spec("expandable_segments:true", spec, sizeof spec, NULL, 0, err) < 0);
  CHECK_CONTAINS(err, "expected True or False");
  CHECK(alloc_conf_to_spec("max_split_size_mb", spec, sizeof spec, NULL, 0, err) < 0);
  CHECK_CONTAINS(err, "expected key:value");
  CHECK(alloc_conf_to_spec("roundup_power2_divisions:[256:1", spec, sizeof spec, NULL, 0, err) < 0);
  CHECK(alloc_conf_to_spec("max_split_mb:128", spec, sizeof spec, NULL, 0, err) < 0);
  CHECK_CONTAINS(err, "unknown key 'max_split_mb'");
}

/* what alloc_conf_format writes, PyTorch's parser (mirrored by caching_parse_roundup)
 * reads back into the same 16 values */
TEST(alloc_conf_roundup_list_round_trips_through_pytorchs_parser) {
  const uint64_t cases[][16] = {
    {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4},
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 8, 8, 8, 8, 8, 8},
    {4, 4, 4, 4, 8, 8, 8, 8, 8, 8, 0, 0, 0, 0, 0, 0},
    {8, 1, 8, 1, 8, 1, 8, 1, 8, 1, 8, 1, 8, 1, 8, 2},
    {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 16},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char text[300], err[FB_ERRLEN];
    uint64_t back[CACHING_ROUNDUP_INTERVALS];
    alloc_conf_roundup(cases[c], text, sizeof text);
    CHECK_MSG(!caching_parse_roundup(text, back, err), "%s: %s", text, err);
    CHECK_MSG(!memcmp(back, cases[c], sizeof back), "case %zu: %s reads back differently", c, text);
  }
  char text[300];
  alloc_conf_roundup(cases[1], text, sizeof text);
  CHECK_STR(text, "[256:1,512:2,>:8]");
}

TEST(alloc_conf_written_for_pytorch_strategies_only) {
  struct params p;
  char name[64], out[600], err[FB_ERRLEN];
  CHECK(!params_parse_spec("caching", name, sizeof name, &p, err));
  CHECK(!alloc_conf_format("caching", &p, out, sizeof out));
  CHECK_STR(out, "expandable_segments:False");
  CHECK(!params_parse_spec("expandable:max_split_size_mb=128,roundup_power2_divisions=4", name, sizeof name, &p, err));
  CHECK(!alloc_conf_format("expandable", &p, out, sizeof out));
  CHECK_STR(out, "expandable_segments:True,max_split_size_mb:128,roundup_power2_divisions:4");
  CHECK(!params_parse_spec("bfc", name, sizeof name, &p, err));
  CHECK(alloc_conf_format("bfc", &p, out, sizeof out) < 0);
  CHECK_STR(out, "");
  CHECK_STR(alloc_conf_how("expandable"), "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  CHECK_STR(alloc_conf_how("stitch"), "not in PyTorch");
}

/* tests/variants/expandable.pickle was recorded with max_split_size_mb=200 and more */
TEST(only_recorded_inherits_the_snapshots_settings) {
  const char *specs[] = {"recorded", "expandable", "caching", "expandable:max_split_size_mb=64"};
  for (int i = 0; i < 4; i++) {
    struct run_spec s = {.trace = "tests/variants/expandable.pickle", .trace_device = -1, .world = 1, .allocator = specs[i], .quiet = 1};
    s.device.kind = "sim";
    struct run_result r;
    run_result_init(&r);
    CHECK_MSG(replay_run(&s, &r) == 0, "%s: %s", specs[i], r.status);
    if (i == 0) {
      CHECK(r.params_from_trace > 0);
      CHECK_CONTAINS(r.params, "max_split_size_mb=200");
      CHECK_CONTAINS(r.alloc_conf, "max_split_size_mb:200");
    } else {
      CHECK_EQ(r.params_from_trace, 0);
      CHECK(!strstr(r.params, "max_split_size_mb=200"));
      CHECK(!strstr(r.params, "garbage_collection_threshold"));
    }
  }
}

TEST(alloc_conf_option_selects_the_strategy_on_run) {
  char outp[512], errp[512], csv[512];
  snprintf(outp, sizeof outp, "%s/ac_out.txt", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/ac_err.txt", test_tmpdir());
  snprintf(csv, sizeof csv, "%s/ac.csv", test_tmpdir());
  CHECK_EQ(test_cli(outp, errp, "run", "--device", "sim", "--workload", "script:events=a1=30MiB/a2=3MiB/f1/f2",
                    "--alloc-conf", "expandable_segments:True,max_split_size_mb:128", "--out", csv, NULL), 0);
  struct results t;
  char err[256];
  CHECK_MSG(results_load(csv, &t, err, sizeof err) == 0, "%s", err);
  CHECK_EQ(t.nrows, 1);
  CHECK_STR(results_get(&t, 0, "allocator"), "expandable");
  CHECK_STR(results_get(&t, 0, "params"), "max_split_size_mb=128");
  CHECK_STR(results_get(&t, 0, "alloc_conf"), "expandable_segments:True,max_split_size_mb:128");
  results_free(&t);
  CHECK_EQ(test_cli(outp, errp, "run", "--device", "sim", "--workload", "script:events=a1=1K/f1",
                    "--alloc-conf", "expandable_segments:yes", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "expected True or False");
  free(e);
}

/* found by advise's search: under a cap, expandable's release-and-retry spent the block
 * reserved for the split's front, and the split then took from an empty store */
TEST(expandable_split_after_release_and_retry_has_its_block) {
  struct run_spec s = {.trace = "tests/data/gpt_train.pickle.gz", .trace_device = -1, .world = 1, .quiet = 1, .validate = 1,
                       .allocator = "expandable:max_split_size_mb=132,roundup_power2_divisions=[32:0,64:2,>:0]",
                       .cap_bytes = 10000000000ull};
  s.device.kind = "sim";
  struct run_result r;
  run_result_init(&r);
  CHECK_MSG(replay_run(&s, &r) == 0, "%s", r.status);
  CHECK(r.completed);
  CHECK(r.cache_flushes > 0);
}

/* advise replays the trace from memory: the same figures as reading the file */
TEST(trace_in_memory_replays_exactly_as_the_file) {
  const char *files[] = {"gpt_train.pickle.gz", "resnet_varsize.pickle.gz", "gpt_train_short_frames.pickle"};
  const char *allocs[] = {"recorded", "caching:max_split_size_mb=64", "expandable"};
  for (int f = 0; f < 3; f++) {
    struct event_buffer buf;
    char err[FB_ERRLEN];
    CHECK_MSG(!event_buffer_load(&buf, test_data(files[f]), -1, err), "%s", err);
    for (int a = 0; a < 3; a++) {
      struct run_result r[2];
      for (int m = 0; m < 2; m++) {
        struct run_spec s = {.trace = test_data(files[f]), .trace_device = -1, .world = 1, .quiet = 1,
                             .allocator = allocs[a], .events = m ? &buf : NULL};
        s.device.kind = "sim";
        run_result_init(&r[m]);
        CHECK_MSG(replay_run(&s, &r[m]) == 0, "%s", r[m].status);
      }
      CHECK_EQ(r[1].events, r[0].events);
      CHECK_EQ(r[1].peak_reserved, r[0].peak_reserved);
      CHECK_EQ(r[1].peak_allocated, r[0].peak_allocated);
      CHECK_EQ(r[1].device_allocs, r[0].device_allocs);
      CHECK_EQ(r[1].trace_peak_reserved, r[0].trace_peak_reserved);
      CHECK_STR(r[1].params, r[0].params);
      CHECK_STR(r[1].workload, r[0].workload);
    }
    event_buffer_free(&buf);
  }
}

/* a variation whose own peak requested is above the limit cannot be fit by any setting:
 * it is left out of every setting's count (not a veto), and said. With the limit at the
 * recorded run's own peak requested, the variations of resnet_varsize that ask up to 1%
 * more are such. */
LONG_TEST(advise_leaves_out_variations_that_ask_for_more_than_the_limit) {
  struct event_buffer b;
  char err[FB_ERRLEN];
  CHECK_MSG(event_buffer_load(&b, test_data("resnet_varsize.pickle.gz"), -1, err) == 0, "%s", err);
  uint64_t peak = variations_peak_requested(&b);
  event_buffer_free(&b);
  struct advise_opts o = {.trace = test_data("resnet_varsize.pickle.gz"), .trace_device = -1, .budget = peak,
                          .variations = 4, .max_rounds = 1, .no_needs = 1};   /* 1 of 4 asks for more */
  o.device.kind = "sim";
  struct advise_result res;
  CHECK_MSG(advise_run(&o, &res, err) <= 1, "%s", err);
  CHECK(res.beyond > 0);
  CHECK(res.beyond_peak > peak && (double)res.beyond_peak <= (double)peak * 1.01);
  CHECK_EQ(res.nvariations + res.beyond, 4);
  for (int i = 0; i < res.n; i++) CHECK_EQ(res.c[i].nvariations, res.nvariations);
  advise_free(&res);
  char outp[512], errp[512], lim[32];
  snprintf(outp, sizeof outp, "%s/beyond.out", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/beyond.err", test_tmpdir());
  snprintf(lim, sizeof lim, "%lluB", (unsigned long long)peak);
  test_cli(outp, errp, "advise", "--trace", test_data("resnet_varsize.pickle.gz"), "--limit", lim, "--variations", "4", NULL);   /* 1 of 4 */
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "variations ask for more than the limit itself (peak requested");
  CHECK_CONTAINS(e, "no setting fits them; the settings are ranked on the other");
  free(e);
}

/* PyTorch's message must be the snapshot's own OOM: the checkpointing job's OOM snapshot
 * (a 3.42 GiB request) with the fp32 job's message (2.11 GiB, 20.19 GiB allowed) is
 * refused, naming both; its own message is taken; --trust-message takes the other */
TEST(advise_refuses_an_oom_message_of_another_run) {
  char outp[512], errp[512];
  snprintf(outp, sizeof outp, "%s/msg.out", test_tmpdir());
  snprintf(errp, sizeof errp, "%s/msg.err", test_tmpdir());
  const char *snap = "tests/data/recorded/advise_oom/gpt_varlen_ckpt_bf16/oom.pickle.gz";
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", snap, "--oom-message", "tests/data/recorded/advise_oom/gpt_varlen_fp32/oom.txt",
                    "--variations", "2", NULL), 2);
  char *e = test_read_file(errp);
  CHECK_CONTAINS(e, "does not belong to the snapshot");
  CHECK_CONTAINS(e, "'Tried to allocate 2.11 GiB', but the snapshot's failed request is 3.42 GiB");
  free(e);
  CHECK_EQ(test_cli(outp, errp, "advise", "--trace", snap, "--oom-message", "tests/data/recorded/advise_oom/gpt_varlen_fp32/oom.txt",
                    "--variations", "2", "--trust-message", NULL), 0);
  CHECK_EQ(test_cli(outp, errp, "explain", "--trace", snap, "--oom-message", "tests/data/recorded/advise_oom/gpt_varlen_ckpt_bf16/oom.txt",
                    NULL), 0);
}

/* the search's batches of settings x variations land in fixed slots: one thread and
 * three give the same candidates, in the same order, with the same figures and needs */
TEST(advise_same_answer_whatever_the_number_of_threads) {
  struct advise_result res[2];
  int threads[2] = {1, 3};
  for (int k = 0; k < 2; k++) {
    struct advise_opts o = {.trace = test_data("gpt_train.pickle.gz"), .trace_device = -1, .budget = 10000000000ull,
                            .variations = 4, .threads = threads[k]};
    o.device.kind = "sim";
    char err[FB_ERRLEN];
    CHECK_MSG(advise_run(&o, &res[k], err) == 0, "%s", err);
  }
  CHECK_EQ(res[0].n, res[1].n);
  CHECK(res[0].n > 10);
  for (int i = 0; i < res[0].n && i < res[1].n; i++) {
    const struct advise_candidate *a = &res[0].c[i], *b = &res[1].c[i];
    CHECK_STR(a->spec, b->spec);
    CHECK_EQ(a->worst_reserved, b->worst_reserved);
    CHECK_EQ(a->fits_variations, b->fits_variations);
    CHECK_EQ(a->need, b->need);
    CHECK_EQ(a->need_min, b->need_min);
    CHECK_EQ(a->headroom, b->headroom);
    CHECK_EQ(a->worst_variation, b->worst_variation);
    CHECK_EQ(a->r.peak_reserved, b->r.peak_reserved);
    CHECK_EQ(a->mean_driver_ns, b->mean_driver_ns);
  }
  CHECK_EQ(res[0].pick, res[1].pick);
  advise_free(&res[0]);
  advise_free(&res[1]);
}
