/* test_mincap_answers.c - the probes a mincap search answers without replaying them
 * (harness/engine/mincap.c), each rule checked against replays: a run is the same under
 * every cap its comparisons with the cap agree on; every run runs out under the floor (the
 * least its live blocks take at once); and a confirmation's step below the peak requested
 * runs out on any device. */
#include <math.h>
#include <stdlib.h>
#include "test.h"
#include "mincap.h"
#include "mincap_spec.h"

/* every field of two rows but the timing and the cap they ran under */
static int same_run(const struct run_result *a, const struct run_result *b) {
  return !strcmp(a->status, b->status) && a->completed == b->completed && a->events == b->events && a->allocs == b->allocs &&
         a->frees == b->frees && a->oom_count == b->oom_count && a->first_oom_event == b->first_oom_event &&
         a->peak_requested == b->peak_requested && a->peak_allocated == b->peak_allocated && a->peak_reserved == b->peak_reserved &&
         a->internal_frag == b->internal_frag && a->device_allocs == b->device_allocs && a->device_frees == b->device_frees &&
         a->maps == b->maps && a->unmaps == b->unmaps && a->cache_flushes == b->cache_flushes &&
         a->modeled_driver_ns == b->modeled_driver_ns && (a->ext_frag == b->ext_frag || (isnan(a->ext_frag) && isnan(b->ext_frag)));
}

static void replay_under(const struct run_spec *base, uint64_t cap, struct run_result *r) {
  struct run_spec s = mincap_probe_spec(base, cap);
  run_result_init(r);
  replay_run(&s, r);
}

/* the rule a search answers probes by (mincap.c's blind runs): a run of a strategy that
 * reads the cap only by comparing demands with it (cap-blind, or ALLOC_CAP_COMPARED:
 * expandable) reports the caps [same_lo, same_hi] its comparisons come out the same under,
 * and under each of them - its ends and midway - it is the same run, completed or ran out,
 * on workloads whose runs recover from refusals (caching releases its cache and retries);
 * a strategy that reads the cap otherwise reports none, and its search answers no probe so */
TEST(mincap_run_is_the_same_under_every_cap_its_comparisons_agree_on) {
  const char *workloads[] = {"leaky_losses:iters=30", "varlen:iters=20", "train_loop:iters=6"};
  const char *same[] = {"caching", "raw", "stitch", "cupy", "pool", "oracle", "expandable", "caching:roundup_power2_divisions=4"};
  int compared = 0, recovered = 0, ran_out = 0, above = 0;
  for (int w = 0; w < 3; w++)
    for (int a = 0; a < 8; a++) {
      struct run_spec s;
      base_spec(&s, workloads[w], same[a]);
      s.validate = 0;
      struct run_result un;
      replay_under(&s, 0, &un);
      CHECK_MSG(un.same_lo && un.same_hi == UINT64_MAX, "%s: no caps it is the same under", same[a]);
      for (int step = 0; step < 6 && un.completed; step++) {
        uint64_t cap = (uint64_t)((double)un.peak_reserved * (1.0 - 0.03 * step));   /* at R, then below it */
        struct run_result at, lo, mid, hi;
        replay_under(&s, cap, &at);
        if (at.exit_class) continue;
        CHECK_MSG(at.same_lo <= cap && cap <= at.same_hi, "%s on %s under %llu: not within its own caps", same[a], workloads[w],
                  (unsigned long long)cap);
        recovered += at.cache_flushes > 0;
        ran_out += !at.completed;
        uint64_t top = at.same_hi == UINT64_MAX ? 2 * cap : at.same_hi;
        above += top > cap;
        replay_under(&s, at.same_lo, &lo);
        replay_under(&s, at.same_lo + (top - at.same_lo) / 2, &mid);
        replay_under(&s, top, &hi);
        CHECK_MSG(same_run(&lo, &at) && same_run(&mid, &at) && same_run(&hi, &at), "%s on %s under %llu", same[a], workloads[w],
                  (unsigned long long)cap);
        compared++;
      }
    }
  CHECK(compared >= 40);
  CHECK(recovered >= 1);   /* some of them released and retried under the cap */
  CHECK(ran_out >= 5);     /* and some ran out: the same run to the same refusal */
  CHECK(above >= 5);       /* and some are the same above their own cap */
  /* a strategy that reads the cap otherwise (caching with a GC threshold, bfc's memory
   * limit, async's pool size): no caps, no probe answered so */
  const char *readers[] = {"caching:garbage_collection_threshold=0.6", "bfc", "async"};
  for (int a = 0; a < 3; a++) {
    struct run_spec s;
    base_spec(&s, "varlen:iters=20", readers[a]);
    s.validate = 0;
    struct run_result r;
    replay_under(&s, 0, &r);
    CHECK_MSG(!r.same_lo && !r.same_hi, "%s: caps it would be the same under", readers[a]);
    struct mincap_report rep;
    CHECK_EQ(mincap_find(&s, 0.005, 0, &r, &rep), 0);
    CHECK_EQ(rep.same, 0);
  }
  const char *answered[] = {"caching", "expandable"};   /* and one that is: the row a replay at its mincap gives */
  for (int a = 0; a < 2; a++) {
    struct run_spec s;
    base_spec(&s, "varlen:iters=20", answered[a]);
    s.validate = 0;
    struct run_result r;
    struct mincap_report rep;
    CHECK_EQ(mincap_find(&s, 0.005, 0, &r, &rep), 0);
    CHECK(rep.same >= 2);   /* under R, and the survivor's own peak */
    struct run_result again;
    replay_under(&s, r.mincap_bytes, &again);
    CHECK(same_run(&again, &r));
  }
}

/* mincap_below_floor: one step below a found cap that is under the row's peak requested
 * runs out for every strategy (the live blocks alone hold more), so the confirmation takes
 * it without replaying; the rule itself (each strategy run under its peak requested less
 * a byte runs out), and a step below at or above the peak requested replayed as before */
TEST(mincap_confirm_takes_a_step_below_the_peak_requested_as_running_out) {
  const char *workloads[] = {SCRIPT_SMALL, "leaky_losses:iters=20", "varlen:iters=10"};
  int strategies = 0;
  for (int i = 0; allocator_table[i]; i++)
    for (int w = 0; w < 3; w++) {
      struct run_spec s;
      base_spec(&s, workloads[w], allocator_table[i]->name);
      s.validate = 0;
      struct run_result un, under;
      replay_under(&s, 0, &un);
      if (!un.completed || !un.peak_requested) continue;
      replay_under(&s, un.peak_requested - 1, &under);
      CHECK_MSG(!under.completed || under.oom_count, "%s on %s completes under its peak requested less a byte", allocator_table[i]->name,
                workloads[w]);
      strategies += w == 0;
    }
  CHECK(strategies >= 5);
  struct run_spec s;
  base_spec(&s, SCRIPT_SMALL, "raw");
  struct run_result row, un;
  CHECK_EQ(mincap_find(&s, 0.005, 0, &row, NULL), 0);
  replay_under(&s, 0, &un);
  CHECK_EQ(row.mincap_bytes, 8 * MiB);   /* raw: its peak requested */
  CHECK(mincap_below_floor(&row, 0.005));
  char msg[FB_ERRLEN];
  int runs = -1;
  struct device_config sim = {.kind = "sim"};
  CHECK_EQ(mincap_confirm(&s, &sim, &row, &un, 0.005, msg, sizeof msg, &runs), 1);
  CHECK_EQ(runs, 0);   /* at the cap by its uncapped run, below by its peak requested */
  CHECK_CONTAINS(msg, "no run fits there");
  /* caching: 20 MiB found, one step below is far above the 8 MiB requested: replayed */
  base_spec(&s, SCRIPT_SMALL, "caching");
  CHECK_EQ(mincap_find(&s, 0.005, 0, &row, NULL), 0);
  replay_under(&s, 0, &un);
  CHECK(!mincap_below_floor(&row, 0.005));
  CHECK_EQ(mincap_confirm(&s, &sim, &row, &un, 0.005, msg, sizeof msg, &runs), 1);
  CHECK_EQ(runs, 2);
  CHECK(!strstr(msg, "no run fits"));
  /* the boundary: a step below equal to the peak requested is not under it */
  struct run_result edge = row;
  edge.peak_requested = (uint64_t)floor((double)edge.mincap_bytes * (1.0 - 0.005));
  CHECK(!mincap_below_floor(&edge, 0.005));
  edge.peak_requested++;
  CHECK(mincap_below_floor(&edge, 0.005));
}

/* the floor a search answers probes under (allocator_ops.least_block): a run tracking it
 * (run_spec.least_floor) reports the most its live blocks took at least at once, at least
 * the peak requested, and every run under a cap below it runs out - at that floor less a
 * byte and midway down to the peak requested; a rounding setting lifts it above the peak
 * requested, and its search answers probes under it without a replay */
TEST(mincap_floor_is_where_every_run_runs_out) {
  const char *workloads[] = {"leaky_losses:iters=20", "varlen:iters=10", "train_loop:iters=4"};
  const char *settings[] = {"caching", "caching:roundup_power2_divisions=4", "expandable",
                            "expandable:roundup_power2_divisions=[256:4,>:1]", "raw", "bfc"};
  int lifted = 0, checked = 0;
  for (int w = 0; w < 3; w++)
    for (int a = 0; a < 6; a++) {
      struct run_spec s;
      base_spec(&s, workloads[w], settings[a]);
      s.validate = 0;
      struct run_spec u = mincap_probe_spec(&s, 0);
      u.least_floor = 1;
      struct run_result un;
      run_result_init(&un);
      CHECK_EQ(replay_run(&u, &un), 0);
      CHECK_MSG(un.peak_least >= un.peak_requested, "%s on %s: floor %llu under the peak requested %llu", settings[a], workloads[w],
                (unsigned long long)un.peak_least, (unsigned long long)un.peak_requested);
      lifted += un.peak_least > un.peak_requested + un.peak_requested / 100;
      uint64_t under[] = {un.peak_least - 1, un.peak_requested + (un.peak_least - un.peak_requested) / 2};
      for (int i = 0; i < 2; i++) {
        if (under[i] >= un.peak_least) continue;
        struct run_result r;
        replay_under(&s, under[i], &r);
        CHECK_MSG(!r.completed || r.oom_count, "%s on %s completes under %llu, below its floor %llu", settings[a], workloads[w],
                  (unsigned long long)under[i], (unsigned long long)un.peak_least);
        checked++;
      }
    }
  CHECK(lifted >= 2);   /* the rounding settings' floors are above their peaks requested */
  CHECK(checked >= 20);
  struct run_spec s;
  base_spec(&s, "varlen:iters=10", "caching:roundup_power2_divisions=4");
  s.validate = 0;
  struct run_result r, again;
  struct mincap_report rep;
  CHECK_EQ(mincap_find(&s, 0.005, 0, &r, &rep), 0);
  CHECK(rep.floor >= 1);   /* the floor probe at least */
  replay_under(&s, r.mincap_bytes, &again);   /* the row is the run at its mincap */
  CHECK(same_run(&again, &r));
}
